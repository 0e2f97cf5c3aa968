import { z } from "zod";
import { MergeQueueStatusSchema, OnRefusedSchema } from "../entities/mergeQueue.js";
import { MergeCheckSchema } from "../workspaceQueries.js";

/** t3_merge_queue, the HTTP merge-queue routes and `loom merges` (docs/workspaces.md, "The merge queue"). */

const ThreadId = z.string().min(1).max(512);

export const MergeQueueInput = z
  .object({
    threadId: ThreadId.optional().describe("The parent; absent: every parent (list only)"),
    action: z.enum(["list", "cancel"]).optional().describe("Default list"),
    entryId: z.string().min(1).max(1_024).optional().describe("The entry to cancel"),
    /** Ended entries too (merged, refused, cancelled); default true. */
    includeEnded: z.boolean().optional(),
  })
  .strict();
export type MergeQueueInput = z.infer<typeof MergeQueueInput>;

/** One entry as the queue is listed: its status, how it ended and its log. */
export const MergeQueueEntryView = z.object({
  entryId: z.string(),
  parentThreadId: z.string(),
  childThreadId: z.string(),
  status: MergeQueueStatusSchema,
  onRefused: OnRefusedSchema,
  enqueuedAt: z.string(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
  attempts: z.number().int(),
  /** merged: up_to_date, fast_forward or merge_commit; returned_to_child. */
  outcome: z.string().nullable(),
  /** The parent's HEAD after the merge (unchanged when refused). */
  commit: z.string().nullable(),
  /** merged: the files the merge changed; refused: the conflicting files (or those in the way). */
  files: z.array(z.string()),
  /** Refused: the workspace code (workspace_merge_conflict, workspace_check_failed, ...) and why. */
  workspaceCode: z.string().nullable(),
  reason: z.string().nullable(),
  /** The project's check as it ran (its output's tail). */
  check: MergeCheckSchema.nullable(),
  /** returned_to_child: the child's run that has the refusal as its brief. */
  childRunId: z.string().nullable(),
  /** onRefused resolver: the resolver thread handed the refused merge, and where it stands (running, resolved, failed). */
  resolverThreadId: z.string().nullable(),
  resolverStatus: z.enum(["running", "resolved", "failed"]).nullable(),
  log: z.array(z.string()),
});
export type MergeQueueEntryView = z.infer<typeof MergeQueueEntryView>;

export const MergeQueueOutput = z.object({
  /** The parent, or null for every parent's entries. */
  threadId: z.string().nullable(),
  /** Entries in the order they were queued; without a parent, every open one and the last 50 ended ones. */
  entries: z.array(MergeQueueEntryView),
  /** Entries queued or merging. */
  open: z.number().int().nonnegative(),
});
export type MergeQueueOutput = z.infer<typeof MergeQueueOutput>;
