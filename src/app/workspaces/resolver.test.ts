import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MergeQueueEntry } from "../../contracts/entities/mergeQueue.js";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { gitSync } from "../../testkit/gitRepo.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, ownerApi, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Resolver tasks through the real server on a real repository: a merge the
 * queue refuses with `onRefused: "resolver"` goes to a delegated child of the
 * parent on the scripted instance, in a worktree at the merge in progress;
 * when it ends, its branch is merged through the same checked path. The
 * scripted resolver's instructions are its script.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

/** Passes when every `*.txt` file's first line is "ok". */
const CHECK = `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo checked`;

interface Refusal {
  error: { code: string; message: string };
}

/** A parent with worktree children, each writing one file, all ended and the parent idle; their thread ids in order. */
async function children(h: LoomHarness, writes: readonly (readonly [string, string])[]): Promise<{ parentId: string; ids: string[] }> {
  const parent = await h.launch({
    projectId: "repo",
    message: script(
      ...writes.map(([path, content], index) => ({
        call: "delegate_task",
        args: { task: script({ write: { path, content } }, { say: "done" }), isolation: "worktree", clientRequestId: `c${index}` },
        as: `c${index}`,
      })),
      { say: writes.map((_, index) => `{{c${index}.childThreadId}}`).join(" ") },
    ),
  });
  await h.waitForEnd(parent.runId!);
  const ids = h.assistantTexts(parent.threadId).at(-1)!.split(" ");
  for (const id of ids) expect((await h.waitForEnd(h.runs(id)[0]!.id)).status).toBe("completed");
  await h.until(() => h.runs(parent.threadId).every((run) => run.endedAt !== null), "the parent idle", 15_000);
  return { parentId: parent.threadId, ids };
}

const mergeOf =
  (h: LoomHarness) =>
  <T>(id: string, body: Record<string, unknown> = {}) =>
    ownerApi<T>(h, `/api/orchestration/threads/${encodeURIComponent(id)}/merge-into-parent`, { method: "POST", body });

/** The context the resolver's run was given: Loom's account of the merge. */
const briefOf = (h: LoomHarness, threadId: string): string =>
  (h.state.threadTransfers.get(threadId) ?? [])
    .map((id) => h.state.transfers.get(id)!)
    .filter((transfer) => transfer.kind === "manual")
    .map((transfer) => transfer.text)
    .join("\n");

const entryOf = (h: LoomHarness, entryId: string): MergeQueueEntry | undefined => h.state.mergeQueueEntries.get(entryId);

describe("resolver tasks of the merge queue", () => {
  it("hands a conflict to a resolver in a worktree at the merge in progress, and merges its result once its check passes", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK });
    const { h, repo } = env;
    const merge = mergeOf(h);
    const { parentId, ids } = await children(h, [
      ["a.txt", "ok\nfrom a\n"],
      ["a.txt", "ok\nfrom c\n"],
    ]);
    const [a, c] = ids as [string, string];
    expect((await merge<MergeIntoParentOutput>(a)).body.outcome).toBe("fast_forward");
    const head = gitSync(repo, "rev-parse", "HEAD");

    const resolver = { providerInstanceId: "scripted", instructions: JSON.stringify({ script: [{ run: "printf 'ok\\nfrom a\\nfrom c\\n' > a.txt" }, { say: "resolved" }] }) };
    const handed = await merge<MergeIntoParentOutput>(c, { onRefused: "resolver", resolver });
    expect(handed.status).toBe(200);
    expect(handed.body).toMatchObject({ outcome: "handed_to_resolver", commit: head, resolver: { workspaceCode: "workspace_merge_conflict", files: ["a.txt"] } });
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    const resolverId = handed.body.resolver!.threadId;
    // The child's changes were committed on its branch first: that commit is the merge's second side.
    const childHead = gitSync(h.state.threads.get(c)!.worktreePath!, "rev-parse", "HEAD");
    expect(handed.body.childCommit).toBe(childHead);

    // A delegated child of the parent, no broader than it, whose worktree starts at the merge in progress: both sides, conflict markers in a.txt.
    const thread = h.state.threads.get(resolverId)!;
    const parentThread = h.state.threads.get(parentId)!;
    expect(thread.lineage.parentThreadId).toBe(parentId);
    expect(thread.runtimeMode).toBe(parentThread.runtimeMode);
    expect(h.state.tasks.get(handed.body.resolver!.taskId)).toMatchObject({ childThreadId: resolverId, parentThreadId: parentId, wakePolicy: "never" });
    const base = thread.workspace!.baseRef!;
    expect(gitSync(repo, "rev-list", "--parents", "-n1", base).split(" ").slice(1)).toEqual([head, childHead]);
    const marked = gitSync(repo, "show", `${base}:a.txt`);
    expect(marked).toContain("<<<<<<<");
    expect(marked).toContain("from a");
    expect(marked).toContain("from c");
    // Its run's context is the brief: both sides, the conflicting files; its message the instructions.
    const brief = briefOf(h, resolverId);
    expect(brief).toContain(head);
    expect(brief).toContain(childHead);
    expect(brief).toContain("git could not merge a.txt");
    expect(h.state.turnItems.get(resolverId)!.find((item) => item?.type === "user_message")).toMatchObject({ text: resolver.instructions });

    // Once the resolver ends, the entry is queued again and merges its branch, checked.
    const entryId = [...h.state.mergeQueueEntries.values()].find((entry) => entry.childThreadId === c)!.entryId;
    const merged = await h.until(() => (entryOf(h, entryId)?.status === "merged" ? entryOf(h, entryId) : undefined), "the resolved entry merged", 30_000);
    expect(merged).toMatchObject({ resolution: { threadId: resolverId, status: "resolved" }, result: { check: { exitCode: 0 } } });
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\nfrom c\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
    // One merge commit of the two sides; the commit with the markers is not in the parent's history.
    const parents = gitSync(repo, "rev-list", "--parents", "-n1", "HEAD").split(" ").slice(1);
    expect(parents).toEqual([head, childHead]);
    expect(() => gitSync(repo, "merge-base", "--is-ancestor", base, "HEAD")).toThrow();

    const listed = await h.owner.ok<MergeQueueOutput>("t3_merge_queue", { threadId: parentId });
    expect(listed.entries.find((entry) => entry.entryId === entryId)).toMatchObject({ status: "merged", onRefused: "resolver", resolverThreadId: resolverId, resolverStatus: "resolved" });
    expect(entryOf(h, entryId)!.log.join("\n")).toContain(`handed to resolver thread ${resolverId}`);
  });

  it("ends the entry refused, with the reason, when the resolver's result still fails the check; the parent is untouched", async () => {
    // The project's resolver, for merges that name none.
    const resolver = { providerInstanceId: "scripted", instructions: JSON.stringify({ script: [{ say: "I could not fix it" }] }) };
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK, project: { resolver } });
    const { h, repo } = env;
    const merge = mergeOf(h);
    const { ids } = await children(h, [["b.txt", "broken\n"]]);
    const [b] = ids as [string];
    const head = gitSync(repo, "rev-parse", "HEAD");
    const handed = await merge<MergeIntoParentOutput>(b, { onRefused: "resolver" });
    expect(handed.body).toMatchObject({ outcome: "handed_to_resolver", resolver: { workspaceCode: "workspace_check_failed" } });
    const resolverId = handed.body.resolver!.threadId;
    expect(briefOf(h, resolverId)).toContain("b.txt is not ok");
    expect(h.state.turnItems.get(resolverId)!.find((item) => item?.type === "user_message")).toMatchObject({ text: resolver.instructions });

    const entryId = [...h.state.mergeQueueEntries.values()].find((entry) => entry.childThreadId === b)!.entryId;
    const ended = await h.until(() => (entryOf(h, entryId)?.status === "check_failed" ? entryOf(h, entryId) : undefined), "the entry refused", 30_000);
    expect(ended).toMatchObject({ resolution: { threadId: resolverId, status: "resolved" }, failure: { workspaceCode: "workspace_check_failed", check: { exitCode: 1 } } });
    expect(ended.failure!.message).toContain(`the resolver's merge (thread ${resolverId}) was refused`);
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
    // Not looped: the entry ended, and no second resolver was delegated.
    expect([...h.state.tasks.values()].filter((task) => task.title.startsWith("Resolve the merge"))).toHaveLength(1);
  });

  it("refuses a resolver that is missing, unasked for or unknown, and queues nothing", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK });
    const { h } = env;
    const merge = mergeOf(h);
    const { ids } = await children(h, [["d.txt", "ok\n"]]);
    const [d] = ids as [string];
    const missing = await merge<Refusal>(d, { onRefused: "resolver" });
    expect(missing).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    expect(missing.body.error.message).toContain("resolver");
    const unasked = await merge<Refusal>(d, { resolver: { providerInstanceId: "scripted" } });
    expect(unasked).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    const unknown = await merge<Refusal>(d, { onRefused: "resolver", resolver: { providerInstanceId: "nowhere" } });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.body.error.message).toContain("nowhere");
    expect(h.state.mergeQueueEntries.size).toBe(0);
  });
});
