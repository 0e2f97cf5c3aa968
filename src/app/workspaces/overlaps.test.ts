import { afterEach, describe, expect, it } from "vitest";
import type { ThreadSummary } from "../../contracts/tools/toolOutputs.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Overlap awareness through the real server on a real repository: three
 * worktree children, two of them changing the same file; their checkpoints
 * make both of them and their parent hear of it, and t3_thread_read shows it.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

describe("worktree siblings changing the same files", () => {
  it("records the overlap on both siblings, tells them and their parent the files, and leaves a disjoint sibling alone", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "shared.txt": "base\n" } });
    const { h } = env;
    const task = (...writes: Array<[string, string]>) => script(...writes.map(([path, content]) => ({ write: { path, content } })), { say: "done" });
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: task(["shared.txt", "one\n"], ["a.txt", "a\n"]), isolation: "worktree", clientRequestId: "c1" }, as: "one" },
        { call: "delegate_task", args: { task: task(["shared.txt", "two\n"]), isolation: "worktree", clientRequestId: "c2" }, as: "two" },
        { call: "delegate_task", args: { task: task(["c.txt", "c\n"]), isolation: "worktree", clientRequestId: "c3" }, as: "three" },
        { say: "{{one.childThreadId}} {{two.childThreadId}} {{three.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [one, two, three] = h.assistantTexts(parent.threadId).at(-1)!.split(" ") as [string, string, string];
    for (const id of [one, two, three]) expect((await h.waitForEnd(h.runs(id)[0]!.id)).status).toBe("completed");
    const overlaps = (id: string) => h.state.threads.get(id)?.workspace?.overlaps ?? [];
    await h.until(() => overlaps(one).length > 0 && overlaps(two).length > 0, "the overlap recorded on both siblings", 15_000);
    expect(overlaps(one)).toEqual([{ threadId: two, files: ["shared.txt"] }]);
    expect(overlaps(two)).toEqual([{ threadId: one, files: ["shared.txt"] }]);
    expect(overlaps(three)).toEqual([]);

    const noticesOf = (id: string) => (h.state.turnItems.get(id) ?? []).filter((item) => item?.type === "notification" && /same files|both changed/.test(item.text));
    const told = await h.until(() => (noticesOf(parent.threadId).length > 0 ? noticesOf(parent.threadId) : null), "the parent's overlap notice");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ text: expect.stringContaining("shared.txt") });
    for (const id of [one, two]) expect(noticesOf(id)).toHaveLength(1);
    expect(noticesOf(three)).toHaveLength(0);

    const read = await h.owner.ok<{ thread: ThreadSummary }>("t3_thread_read", { threadId: one });
    expect(read.thread.overlaps).toEqual([{ threadId: two, files: ["shared.txt"] }]);
  });
});
