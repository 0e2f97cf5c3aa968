import { CheckpointStatus, CheckpointTrigger, type Checkpoint } from "../../contracts/entities/checkpoints.js";
import type { AppThread, ThreadWorkspace } from "../../contracts/thread.js";
import type { Changes } from "../run/changes.js";
import { activeRun, turnFacts } from "../run/lifecycle.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { changed } from "../thread/guards.js";

/**
 * Overlap awareness between worktree siblings: children of one parent, each
 * in a worktree of its own, that changed the same files, as their turns'
 * file changes are recorded and as their checkpoints are. When a thread
 * changes a file a live sibling has changed too, both threads record the pair
 * (`workspace.overlaps`) and they and their parent get a notice with the
 * files: from a checkpoint, steered into a running turn that can take it,
 * else on the timeline only; from a file change in a running turn, on the
 * timelines at once, leaving the turns' work alone (no run is started for
 * it either way). A pair is told again only when its shared
 * files grow, so a file edited many times is told once. A merge queue's
 * resolver thread, which works on two siblings' files by design, is not counted.
 */

type Overlap = NonNullable<ThreadWorkspace["overlaps"]>[number];

/** Every file the thread's own checkpoints and recorded file changes changed (renames count both paths). */
export function filesChangedBy(state: OrchestrationState, threadId: string): Set<string> {
  const files = new Set<string>();
  for (const scope of state.checkpointScopes.values()) {
    if (scope.threadId !== threadId) continue;
    for (const id of state.scopeCheckpoints.get(scope.id) ?? []) for (const path of checkpointFiles(state.checkpoints.get(id))) files.add(path);
  }
  const thread = state.threads.get(threadId);
  for (const item of state.turnItems.get(threadId) ?? []) {
    if (item?.type === "file_change") for (const change of item.changes) files.add(inWorktree(thread, change.path));
  }
  return files;
}

function checkpointFiles(checkpoint: Checkpoint | undefined): string[] {
  if (checkpoint === undefined || checkpoint.status !== CheckpointStatus.ready || checkpoint.trigger === CheckpointTrigger.childBranch) return [];
  return checkpoint.files.flatMap((file) => (file.previousPath === undefined || file.previousPath === null ? [file.path] : [file.path, file.previousPath]));
}

/** A path as the worktree's checkpoints name it: relative to the worktree (an agent may report it absolute). */
function inWorktree(thread: AppThread | undefined, path: string): string {
  const root = thread?.worktreePath ?? null;
  if (root !== null && path.startsWith(`${root}/`)) return path.slice(root.length + 1);
  return path.startsWith("./") ? path.slice(2) : path;
}

function isWorktreeChild(state: OrchestrationState, thread: AppThread | undefined): thread is AppThread & { workspace: ThreadWorkspace } {
  if (thread === undefined || thread.deletedAt !== null || thread.lineage.parentThreadId === null || thread.workspace === undefined || thread.workspace === null) return false;
  // A resolver starts at a merge in progress, not at a checkpoint of its parent.
  if (thread.workspace.baseCheckpointId !== null) return true;
  for (const entry of state.mergeQueueEntries.values()) if (entry.resolution?.threadId === thread.id) return false;
  return true;
}

/** Record and tell the overlaps a thread's new checkpoint makes with its live worktree siblings. */
export function noteOverlaps(changes: Changes, checkpoint: Checkpoint): void {
  noteChangedFiles(changes, checkpoint.threadId, checkpointFiles(checkpoint), true);
}

/** Record and tell the overlaps a file_change item of a thread's running turn makes, as it is recorded. */
export function noteFileChanges(changes: Changes, threadId: string, paths: readonly string[]): void {
  const thread = changes.thread(threadId);
  noteChangedFiles(changes, threadId, paths.map((path) => inWorktree(thread, path)), false);
}

/** `steer`: a checkpoint's notice reaches a running turn that can take it; a file change's, told mid-turn, goes on the timelines only, leaving the turns' work as it is. */
function noteChangedFiles(changes: Changes, threadId: string, added: readonly string[], steer: boolean): void {
  const thread = changes.thread(threadId);
  if (added.length === 0 || !isWorktreeChild(changes.state, thread)) return;
  const before = filesChangedBy(changes.state, thread.id);
  // A file the thread had changed before was weighed then, and each sibling weighs it as it changes it.
  if (added.every((file) => before.has(file))) return;
  const mine = new Set([...before, ...added]);
  const parentId = thread.lineage.parentThreadId!;
  for (const candidate of changes.state.threads.values()) {
    if (candidate.id === thread.id || candidate.lineage.parentThreadId !== parentId) continue;
    const sibling = changes.thread(candidate.id);
    if (!isWorktreeChild(changes.state, sibling)) continue;
    const theirs = filesChangedBy(changes.state, sibling.id);
    const shared = [...mine].filter((file) => theirs.has(file)).sort();
    const known = new Set(overlapWith(changes.thread(thread.id)!, sibling.id));
    const fresh = shared.filter((file) => !known.has(file));
    if (fresh.length === 0) continue;
    recordPair(changes, thread.id, sibling.id, shared);
    recordPair(changes, sibling.id, thread.id, shared);
    const list = shared.join(", ");
    tell(changes, steer, thread.id, { title: `Overlap with ${sibling.title}`, text: `Thread "${sibling.title}" (${sibling.id}), working beside this one in its own worktree, changed the same files: ${list}. Their changes will meet when both are merged.`, sourceThreadId: sibling.id });
    tell(changes, steer, sibling.id, { title: `Overlap with ${thread.title}`, text: `Thread "${thread.title}" (${thread.id}), working beside this one in its own worktree, changed the same files: ${list}. Their changes will meet when both are merged.`, sourceThreadId: thread.id });
    tell(changes, steer, parentId, { title: "Children overlap", text: `Your children "${thread.title}" (${thread.id}) and "${sibling.title}" (${sibling.id}) both changed: ${list}.`, sourceThreadId: thread.id });
  }
}

function overlapWith(thread: AppThread, siblingId: string): readonly string[] {
  return thread.workspace?.overlaps?.find((overlap) => overlap.threadId === siblingId)?.files ?? [];
}

function recordPair(changes: Changes, threadId: string, siblingId: string, files: readonly string[]): void {
  const thread = changes.thread(threadId)!;
  const workspace = thread.workspace!;
  const others: Overlap[] = (workspace.overlaps ?? []).filter((overlap) => overlap.threadId !== siblingId);
  const overlaps = [...others, { threadId: siblingId, files: [...files] }];
  changes.putThread("thread.metadata-updated", changed(thread, changes.ctx, { workspace: { ...workspace, overlaps } }));
}

/** A notice steered into the thread's running turn when asked and its provider can take one, else a timeline item only. */
function tell(changes: Changes, steer: boolean, threadId: string, body: { readonly title: string; readonly text: string; readonly sourceThreadId: string }): void {
  const thread = changes.thread(threadId);
  if (thread === undefined || thread.deletedAt !== null) return;
  const active = activeRun(changes, threadId);
  const steerable = steer && active !== null && active.status === "running" && active.interruptRequestedAt === null && turnFacts(changes.ctx, active)?.capabilities.steering === true;
  if (steerable) {
    deliverNotice(changes, threadId, body, { allowSteer: true });
    return;
  }
  changes.addItem(threadId, active?.id ?? null, { type: "notification", ...body });
}
