import type { MergeQueueEntry, MergeResolution, MergeResolver } from "../../contracts/entities/mergeQueue.js";
import type { AppThread } from "../../contracts/thread.js";
import type { MergeCheck, MergeIntoParentInput, MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { joinId } from "../../core/ids.js";
import { CheckFailedError } from "../../workspaces/checkedMerge.js";
import { commitWorktreeChanges } from "../../workspaces/commitChanges.js";
import type { WorkspaceError } from "../../workspaces/errors.js";
import { openWorkingTree } from "../../workspaces/repository.js";
import { concludeResolution, mergeInProgressCommit } from "../../workspaces/resolution.js";
import type { ActingCaller, Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { resolveModes, resolveTarget } from "../policy.js";
import { type MergeContext, childAndParent, mergeChild } from "./mergeChild.js";
import { projectOf, workspacePathOf } from "./paths.js";

/**
 * Resolver tasks (docs/workspaces.md, "Resolver tasks"): a merge the queue
 * refused for a conflict or a failed check, queued with `onRefused:
 * "resolver"`, is handed to a delegated child of the parent on the chosen
 * instance, in a worktree at the merge in progress; once it ends, its branch
 * is concluded into one merge commit and merged through the same checked path.
 */

/** What a resolver is told after Loom's account of the merge, unless the merge names its own instructions. */
export const DEFAULT_RESOLVER_INSTRUCTIONS =
  "Resolve the merge described above in your worktree: keep both sides' intent, leave no conflict marker, and make the project's check pass. Then end your turn with a short account of what you did.";

/** The resolver an enqueue names (else the project's), checked now: its instance and model must resolve, its modes are the parent's or narrower. */
export async function resolverOf(ctx: AppContext, caller: Caller, parent: AppThread, input: MergeIntoParentInput): Promise<MergeResolver | null> {
  if (input.onRefused !== "resolver") {
    if (input.resolver !== undefined) fail("invalid_request", "resolver is only for onRefused resolver");
    return null;
  }
  const asked =
    input.resolver ??
    projectOf(ctx, parent.projectId)?.resolver ??
    fail("invalid_request", "onRefused resolver needs resolver: { providerInstanceId, model? } (or the project's resolver in the config), the provider instance whose thread resolves a refused merge");
  // The resolver is the parent's delegated child: its modes are bounded by the parent's, as any child's.
  const acting: ActingCaller = { kind: "thread", identity: caller, thread: parent, activeRun: null, requestScope: "owner", providerInstanceId: parent.providerInstanceId };
  const target = await resolveTarget(ctx.registry, acting, { providerInstanceId: asked.providerInstanceId, ...(asked.model === undefined ? {} : { model: asked.model }) });
  return { providerInstanceId: target.providerInstanceId, model: target.model, ...resolveModes(acting, target.availability, {}), instructions: asked.instructions ?? null };
}

/**
 * Hand the merging entry's refusal to its resolver (merge-queue.resolve): the
 * merge in progress is written as a commit, and the resolver delegated with
 * ids derived from the entry, so a replayed effect lands on the same thread.
 * Returns the rejection's message when the resolver could not be delegated
 * (a budget, a limit, the parent's ceiling, an unavailable instance).
 */
export async function handToResolver(ctx: MergeContext, entry: MergeQueueEntry, error: WorkspaceError): Promise<string | null> {
  const { child, parent } = childAndParent(ctx, entry.childThreadId);
  const [parentCommit, childCommit] = await Promise.all([openWorkingTree(workspacePathOf(ctx, parent)), openWorkingTree(child.worktreePath)]).then(([p, c]) => [p.head, c.head]);
  if (parentCommit == null || childCommit == null) return "a side of the merge has no commit";
  const label = child.branch ?? childCommit;
  const progress = await mergeInProgressCommit({ cwd: child.worktreePath, ours: parentCommit, theirs: childCommit, message: `loom: merge of ${label} in progress, for its resolver\n` });
  const check = error instanceof CheckFailedError ? error.check : null;
  const files = progress.conflicted.length > 0 ? [...progress.conflicted] : [...error.files];
  const resolver = entry.resolver!;
  const brief = briefOf(parent, child, { parentCommit, childCommit, baseCommit: progress.commit, files, check });
  const id = (prefix: string) => joinId(prefix, "merge-resolver", entry.entryId);
  const receipt = await ctx.orchestrator.dispatch({
    type: "merge-queue.resolve",
    commandId: joinId("cmd", "merge-queue-resolve", entry.entryId),
    data: {
      parentThreadId: entry.parentThreadId,
      entryId: entry.entryId,
      baseCommit: progress.commit,
      parentCommit,
      childCommit,
      workspaceCode: error.code,
      files,
      check,
      taskId: id("subagent"),
      resolverThreadId: id("thread"),
      resolverRunId: id("run"),
      resolverMessageId: id("message"),
      title: `Resolve the merge of ${child.title}`.slice(0, 500),
      prompt: resolver.instructions ?? DEFAULT_RESOLVER_INSTRUCTIONS,
      brief: `<merge_resolution entry="${escaped(entry.entryId)}">\n${escaped(brief)}\n</merge_resolution>`,
    },
  });
  return receipt.status === "accepted" ? null : receipt.rejection.message;
}

/**
 * Merge what the resolver made: its changes committed, its branch concluded
 * into one merge commit of the two sides (no conflict marker may remain in
 * the files that conflicted), then merged into the parent as a child's
 * branch is, checked first. Answered as the entry's child's merge.
 */
export async function mergeResolved(ctx: MergeContext, entry: MergeQueueEntry, resolution: MergeResolution): Promise<MergeIntoParentOutput> {
  const { child: resolver } = childAndParent(ctx, resolution.threadId);
  const child = ctx.orchestrator.state.threads.get(entry.childThreadId);
  await commitWorktreeChanges({ worktreePath: resolver.worktreePath, message: `loom: resolution by thread ${resolver.id}\n` });
  await concludeResolution({
    worktreePath: resolver.worktreePath,
    baseCommit: resolution.baseCommit,
    parentCommit: resolution.parentCommit,
    childCommit: resolution.childCommit,
    files: resolution.files,
    message: entry.message ?? `Merge branch '${child?.branch ?? resolution.childCommit}' (resolved by thread ${resolver.id})\n`,
  });
  const merged = await mergeChild(ctx, resolver.id, { commitChild: false, message: entry.message, onRefused: "report" });
  return { ...merged, threadId: entry.childThreadId };
}

/** An entry waiting on its resolver as merge-into-parent answers it: the parent unchanged, and who works on it. */
export function handedToResolver(entry: MergeQueueEntry, resolution: MergeResolution): MergeIntoParentOutput {
  return {
    threadId: entry.childThreadId,
    parentThreadId: entry.parentThreadId,
    outcome: "handed_to_resolver",
    commit: resolution.parentCommit,
    previousHead: resolution.parentCommit,
    childCommit: resolution.childCommit,
    childBranch: null,
    childChangesCommit: null,
    files: [],
    check: resolution.check,
    resolver: { threadId: resolution.threadId, taskId: resolution.taskId, runId: resolution.runId, workspaceCode: resolution.workspaceCode, files: resolution.files },
  };
}

interface Sides {
  readonly parentCommit: string;
  readonly childCommit: string;
  readonly baseCommit: string;
  readonly files: readonly string[];
  readonly check: MergeCheck | null;
}

function briefOf(parent: AppThread, child: AppThread, sides: Sides): string {
  const side = (thread: AppThread, commit: string) => `thread "${thread.title}" (${thread.id}) at ${commit}${thread.branch === null ? "" : ` on ${thread.branch}`}`;
  const lines = [
    "Loom's merge queue could not merge a child's branch into its parent on its own; you resolve it.",
    `Your worktree holds the merge in progress: its HEAD (${sides.baseCommit}) is a merge commit of`,
    `- the parent (first parent, "ours"): ${side(parent, sides.parentCommit)}`,
    `- the child (second parent, "theirs"): ${side(child, sides.childCommit)}`,
    "",
  ];
  if (sides.check === null) {
    lines.push(`git could not merge ${sides.files.join(", ")}: those files hold conflict markers (<<<<<<< the parent's side, >>>>>>> the child's).`);
  } else {
    const why = sides.check.outcome === "timed_out" ? "timed out" : `exited with ${sides.check.exitCode ?? "a signal"}`;
    lines.push(`The merged files fail the project's check: \`${sides.check.command}\` ${why}.${sides.files.length > 0 ? ` The merge changed ${sides.files.join(", ")}.` : ""}`, "Its last output:", "```", sides.check.output.slice(-8_000), "```");
  }
  lines.push(
    "",
    "Edit the files in your worktree; commit them or leave them uncommitted. Do not reset or rebase the branch. When your turn ends, Loom commits your changes, makes one merge commit of the two sides with your files, checks it with the project's check and, when it passes, moves the parent to it.",
  );
  return lines.join("\n");
}

/** The brief goes inside Loom's context element (src/engine/runInput.ts): its markup characters are escaped, as transcripts' are. */
function escaped(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
