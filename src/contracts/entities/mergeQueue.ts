import { z } from "zod";
import { FAILURE_CODES, type FailureCode } from "../failures.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { MergeCheckSchema, MergeIntoParentOutput } from "../workspaceQueries.js";

/**
 * The merge queue of a parent workspace (docs/workspaces.md, "The merge
 * queue"): worktree children's branches waiting to be merged into their
 * parent one at a time, each with its status and log. One record per entry,
 * on the parent thread's stream.
 */

export const MergeQueueStatus = {
  /** Queued from a run still going (t3_thread_merge_back): it joins the queue once neither thread has a run going or queued. */
  waitingForIdle: "waiting_for_idle",
  /** Waiting for the entries before it. */
  queued: "queued",
  /** Being merged (and checked); a restart finds it here and merges it again, which a merge already made answers `up_to_date`. */
  merging: "merging",
  /** The parent moved to the merge (or already had the child's commit); `result` says how. */
  merged: "merged",
  /** A resolver thread works on the refused merge (`onRefused: "resolver"`); the queue waits for it, and the entry is merged again (its resolver's branch) when the resolver ends. */
  resolving: "resolving",
  /** Refused and handed back to the child as a run (`onRefused: "child"`); `result.returnedToChild` names the run. */
  returnedToChild: "returned_to_child",
  /** The merge conflicts; `failure.files`. The parent is as it was. */
  conflict: "conflict",
  /** The project's checkCommand (or setup) did not pass on the merged state; `failure.check`. The parent is as it was. */
  checkFailed: "check_failed",
  /** Refused for another reason (a run going, local changes in the way, a thread deleted); `failure` says why. */
  failed: "failed",
  /** Cancelled while it was queued. */
  cancelled: "cancelled",
} as const;
export type MergeQueueStatus = (typeof MergeQueueStatus)[keyof typeof MergeQueueStatus];

export const MergeQueueStatusSchema = z.enum([
  MergeQueueStatus.waitingForIdle,
  MergeQueueStatus.queued,
  MergeQueueStatus.merging,
  MergeQueueStatus.resolving,
  MergeQueueStatus.merged,
  MergeQueueStatus.returnedToChild,
  MergeQueueStatus.conflict,
  MergeQueueStatus.checkFailed,
  MergeQueueStatus.failed,
  MergeQueueStatus.cancelled,
]);

/** The statuses an entry ends in. */
export const MergeQueueEndStatusSchema = z.enum([
  MergeQueueStatus.merged,
  MergeQueueStatus.returnedToChild,
  MergeQueueStatus.conflict,
  MergeQueueStatus.checkFailed,
  MergeQueueStatus.failed,
]);
export type MergeQueueEndStatus = z.infer<typeof MergeQueueEndStatusSchema>;

/** Not ended yet: waiting for its threads to be idle, queued, merging, or waiting on its resolver. */
export function isOpenMergeStatus(status: MergeQueueStatus): boolean {
  return status === MergeQueueStatus.waitingForIdle || status === MergeQueueStatus.queued || status === MergeQueueStatus.merging || status === MergeQueueStatus.resolving;
}

/**
 * The queue's own work: an entry queued, merging, or waiting on its resolver
 * (what it resolves is merged onto the state it resolved against, so the
 * queue waits for it). One waiting for idle threads is not in the queue yet.
 */
export function isPendingMergeStatus(status: MergeQueueStatus): boolean {
  return status === MergeQueueStatus.queued || status === MergeQueueStatus.merging || status === MergeQueueStatus.resolving;
}

/** What a refused merge does: answered (report), handed back to the child (child), or to a resolver thread (resolver). */
export const OnRefusedSchema = z.enum(["report", "child", "resolver"]);
export type OnRefused = z.infer<typeof OnRefusedSchema>;

/** Why an entry was refused: the wire failure the merge answered, with its workspace code, files and check. */
export const MergeQueueFailureSchema = z.object({
  code: z.enum(FAILURE_CODES as [FailureCode, ...FailureCode[]]),
  message: z.string(),
  workspaceCode: z.string().min(1).nullable(),
  files: z.array(z.string()),
  check: MergeCheckSchema.nullable(),
});
export type MergeQueueFailure = z.infer<typeof MergeQueueFailureSchema>;

/** Who resolves a refused merge (`onRefused: "resolver"`): the instance, model and modes, checked against the parent when queued. */
export const MergeResolverSchema = z.object({
  providerInstanceId: z.string().min(1),
  model: z.string().min(1).nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  /** What the resolver is told after Loom's account of the merge; null: Loom's default. */
  instructions: z.string().min(1).nullable(),
});
export type MergeResolver = z.infer<typeof MergeResolverSchema>;

/**
 * The resolver thread of a refused merge: a delegated child of the parent in
 * a worktree at `baseCommit`, the merge of `parentCommit` and `childCommit`
 * as it stood (conflict markers in `files`, or the tree whose check failed).
 * `running` until its task ends; `resolved` once it completed (the entry is
 * queued again and merges the resolver's branch); `failed` when it did not.
 */
export const MergeResolutionSchema = z.object({
  threadId: z.string().min(1),
  taskId: z.string().min(1),
  runId: z.string().min(1),
  status: z.enum(["running", "resolved", "failed"]),
  baseCommit: z.string().min(1),
  parentCommit: z.string().min(1),
  childCommit: z.string().min(1),
  /** What it was handed: the refusal's workspace code, files and check. */
  workspaceCode: z.string().min(1),
  files: z.array(z.string()),
  check: MergeCheckSchema.nullable(),
});
export type MergeResolution = z.infer<typeof MergeResolutionSchema>;

export const MergeQueueEntrySchema = z.object({
  entryId: z.string().min(1),
  parentThreadId: z.string().min(1),
  childThreadId: z.string().min(1),
  status: MergeQueueStatusSchema,
  onRefused: OnRefusedSchema,
  /** onRefused resolver: who resolves. Absent in entries queued before resolvers existed. */
  resolver: MergeResolverSchema.nullable().optional(),
  /** Queued from a run still going (t3_thread_merge_back): the entry merges only while neither thread has a run, and waits again otherwise. */
  waitForIdle: z.boolean().optional(),
  /** The resolver thread handed the refused merge, once there is one. At most one per entry. */
  resolution: MergeResolutionSchema.nullable().optional(),
  commitChild: z.boolean(),
  message: z.string().nullable(),
  enqueuedAt: z.string().min(1),
  startedAt: z.string().min(1).nullable(),
  endedAt: z.string().min(1).nullable(),
  /** Merges begun: more than 1 when one was cut short (a restart) and begun again. */
  attempts: z.number().int().nonnegative(),
  result: MergeIntoParentOutput.nullable(),
  failure: MergeQueueFailureSchema.nullable(),
  /** What happened, one line each: queued, each attempt, the outcome (the conflicting files, the check's exit). */
  log: z.array(z.string()),
});
export type MergeQueueEntry = z.infer<typeof MergeQueueEntrySchema>;
