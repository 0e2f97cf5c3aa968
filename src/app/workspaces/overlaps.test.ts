import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadSummary } from "../../contracts/tools/toolOutputs.js";
import { script } from "../../testkit/loomHarness.js";
import { tempDir } from "../../testkit/gitRepo.js";
import { type RepoHarness, startRepoHarness, waitForCheckpoint } from "../../testkit/workspaceHarness.js";

/**
 * Overlap awareness through the real server on a real repository: three
 * worktree children, two of them changing the same file; their checkpoints
 * make both of them and their parent hear of it, and t3_thread_read shows it;
 * two siblings still in their turns hear of it from their file changes.
 */

let env: RepoHarness | null = null;
let gates: ReturnType<typeof tempDir> | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
  gates?.remove();
  gates = null;
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

    const noticesOf = (id: string) => (h.state.turnItems.get(id) ?? []).filter((item) => item?.type === "notification" && /^(Overlap with|Children overlap)/.test(item.title ?? ""));
    const told = await h.until(() => (noticesOf(parent.threadId).length > 0 ? noticesOf(parent.threadId) : null), "the parent's overlap notice");
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ text: expect.stringContaining("shared.txt") });
    for (const id of [one, two]) expect(noticesOf(id)).toHaveLength(1);
    expect(noticesOf(three)).toHaveLength(0);

    const read = await h.owner.ok<{ thread: ThreadSummary }>("t3_thread_read", { threadId: one });
    expect(read.thread.overlaps).toEqual([{ threadId: two, files: ["shared.txt"] }]);
  });

  it("tells the overlap while both siblings' turns still run, from their file changes, once for many edits", async () => {
    gates = tempDir("overlap-gate");
    const gate = join(gates.path, "go");
    env = await startRepoHarness({ files: { "README.md": "hello\n", "shared.txt": "base\n" } });
    const { h } = env;
    // Each child edits shared.txt twice, then holds its turn open until the test lets it go: no turn-end checkpoint yet.
    const hold = { run: `while [ ! -f '${gate}' ]; do sleep 0.05; done` };
    const task = (name: string) => script({ write: { path: "shared.txt", content: `${name}\n` } }, { write: { path: "shared.txt", content: `${name} again\n` } }, hold, { say: "done" });
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: task("one"), isolation: "worktree", clientRequestId: "c1" }, as: "one" },
        { call: "delegate_task", args: { task: task("two"), isolation: "worktree", clientRequestId: "c2" }, as: "two" },
        { say: "{{one.childThreadId}} {{two.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [one, two] = h.assistantTexts(parent.threadId, parent.runId!).at(-1)!.split(" ") as [string, string];
    const overlaps = (id: string) => h.state.threads.get(id)?.workspace?.overlaps ?? [];
    await h.until(() => overlaps(one).length > 0 && overlaps(two).length > 0, "the overlap recorded from the running turns' file changes", 15_000);
    // Both turns still run, and neither has a turn-end checkpoint: the file changes told it.
    for (const id of [one, two]) expect(h.runs(id)[0]!.endedAt).toBeNull();
    expect([...h.state.checkpoints.values()].filter((c) => (c.threadId === one || c.threadId === two) && c.trigger === "turn_end")).toEqual([]);
    expect(overlaps(one)).toEqual([{ threadId: two, files: ["shared.txt"] }]);
    const noticesOf = (id: string) => (h.state.turnItems.get(id) ?? []).filter((item) => item?.type === "notification" && /^(Overlap with|Children overlap)/.test(item.title ?? ""));
    await h.until(() => noticesOf(parent.threadId).length > 0, "the parent's overlap notice");

    writeFileSync(gate, "");
    for (const id of [one, two]) expect((await h.waitForEnd(h.runs(id)[0]!.id, 15_000)).status).toBe("completed");
    for (const id of [one, two]) await waitForCheckpoint(h, id, h.runs(id)[0]!.id, "turn_end");
    // Four edits and two checkpoints of the one shared file: told once to each.
    for (const id of [parent.threadId, one, two]) expect(noticesOf(id)).toHaveLength(1);
  });
});
