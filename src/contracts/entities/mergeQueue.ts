import { z } from "zod";
import { FAILURE_CODES, type FailureCode } from "../failures.js";
import { MergeCheckSchema, MergeIntoParentOutput } from "../workspaceQueries.js";

/**
 * The merge queue of a parent workspace (docs/workspaces.md, "The merge
 * queue"): worktree children's branches waiting to be merged into their
 * parent one at a time, each with its status and log. One record per entry,
 * on the parent thread's stream.
 */

export const MergeQueueStatus = {
  /** Waiting for the entries before it. */
  queued: "queued",
  /** Being merged (and checked); a restart finds it here and merges it again, which a merge already made answers `up_to_date`. */
  merging: "merging",
  /** The parent moved to the merge (or already had the child's commit); `result` says how. */
  merged: "merged",
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
  MergeQueueStatus.queued,
  MergeQueueStatus.merging,
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

export function isOpenMergeStatus(status: MergeQueueStatus): boolean {
  return status === MergeQueueStatus.queued || status === MergeQueueStatus.merging;
}

/** Why an entry was refused: the wire failure the merge answered, with its workspace code, files and check. */
export const MergeQueueFailureSchema = z.object({
  code: z.enum(FAILURE_CODES as [FailureCode, ...FailureCode[]]),
  message: z.string(),
  workspaceCode: z.string().min(1).nullable(),
  files: z.array(z.string()),
  check: MergeCheckSchema.nullable(),
});
export type MergeQueueFailure = z.infer<typeof MergeQueueFailureSchema>;

export const MergeQueueEntrySchema = z.object({
  entryId: z.string().min(1),
  parentThreadId: z.string().min(1),
  childThreadId: z.string().min(1),
  status: MergeQueueStatusSchema,
  onRefused: z.enum(["report", "child"]),
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
