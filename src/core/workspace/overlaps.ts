import { CheckpointStatus, CheckpointTrigger, type Checkpoint } from "../../contracts/entities/checkpoints.js";
import type { AppThread, ThreadWorkspace } from "../../contracts/thread.js";
import type { Changes } from "../run/changes.js";
import { activeRun, turnFacts } from "../run/lifecycle.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { changed } from "../thread/guards.js";

/**
 * Overlap awareness between worktree siblings: children of one parent, each
 * in a worktree of its own, whose checkpoints changed the same files. When a
 * checkpoint brings a file a live sibling has changed too, both threads record
 * the pair (`workspace.overlaps`) and they and their parent get a notice with
 * the files: steered into a running turn that can take it, else on the
 * timeline only (no run is started for it). A pair is told again only when
 * its shared files grow.
 */

type Overlap = NonNullable<ThreadWorkspace["overlaps"]>[number];

/** Every file the thread's own checkpoints changed (renames count both paths), plus `extra`. */
export function filesChangedBy(state: OrchestrationState, threadId: string, extra: Checkpoint | null = null): Set<string> {
  const files = new Set<string>();
  const add = (checkpoint: Checkpoint | undefined) => {
    if (checkpoint === undefined || checkpoint.status !== CheckpointStatus.ready || checkpoint.trigger === CheckpointTrigger.childBranch) return;
    for (const file of checkpoint.files) {
      files.add(file.path);
      if (file.previousPath !== undefined && file.previousPath !== null) files.add(file.previousPath);
    }
  };
  for (const scope of state.checkpointScopes.values()) {
    if (scope.threadId !== threadId) continue;
    for (const id of state.scopeCheckpoints.get(scope.id) ?? []) add(state.checkpoints.get(id));
  }
  add(extra ?? undefined);
  return files;
}

function isWorktreeChild(thread: AppThread | undefined): thread is AppThread & { workspace: ThreadWorkspace } {
  return thread !== undefined && thread.deletedAt === null && thread.lineage.parentThreadId !== null && thread.workspace !== undefined && thread.workspace !== null;
}

/** Record and tell the overlaps a thread's new checkpoint makes with its live worktree siblings. */
export function noteOverlaps(changes: Changes, checkpoint: Checkpoint): void {
  const thread = changes.thread(checkpoint.threadId);
  if (!isWorktreeChild(thread) || checkpoint.status !== CheckpointStatus.ready || checkpoint.files.length === 0) return;
  const parentId = thread.lineage.parentThreadId!;
  let mine: Set<string> | null = null;
  for (const candidate of changes.state.threads.values()) {
    if (candidate.id === thread.id || candidate.lineage.parentThreadId !== parentId) continue;
    const sibling = changes.thread(candidate.id);
    if (!isWorktreeChild(sibling)) continue;
    mine ??= filesChangedBy(changes.state, thread.id, checkpoint);
    const theirs = filesChangedBy(changes.state, sibling.id);
    const shared = [...mine].filter((file) => theirs.has(file)).sort();
    const known = new Set(overlapWith(changes.thread(thread.id)!, sibling.id));
    const fresh = shared.filter((file) => !known.has(file));
    if (fresh.length === 0) continue;
    recordPair(changes, thread.id, sibling.id, shared);
    recordPair(changes, sibling.id, thread.id, shared);
    const list = shared.join(", ");
    tell(changes, thread.id, { title: `Overlap with ${sibling.title}`, text: `Thread "${sibling.title}" (${sibling.id}), working beside this one in its own worktree, changed the same files: ${list}. Their changes will meet when both are merged.`, sourceThreadId: sibling.id });
    tell(changes, sibling.id, { title: `Overlap with ${thread.title}`, text: `Thread "${thread.title}" (${thread.id}), working beside this one in its own worktree, changed the same files: ${list}. Their changes will meet when both are merged.`, sourceThreadId: thread.id });
    tell(changes, parentId, { title: "Children overlap", text: `Your children "${thread.title}" (${thread.id}) and "${sibling.title}" (${sibling.id}) both changed: ${list}.`, sourceThreadId: thread.id });
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

/** A notice steered into the thread's running turn when its provider can take one, else a timeline item only. */
function tell(changes: Changes, threadId: string, body: { readonly title: string; readonly text: string; readonly sourceThreadId: string }): void {
  const thread = changes.thread(threadId);
  if (thread === undefined || thread.deletedAt !== null) return;
  const active = activeRun(changes, threadId);
  const steerable = active !== null && active.status === "running" && active.interruptRequestedAt === null && turnFacts(changes.ctx, active)?.capabilities.steering === true;
  if (steerable) {
    deliverNotice(changes, threadId, body, { allowSteer: true });
    return;
  }
  changes.addItem(threadId, active?.id ?? null, { type: "notification", ...body });
}
