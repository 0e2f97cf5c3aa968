import { z } from "zod";
import { MergeQueueEndStatusSchema, MergeQueueFailureSchema } from "../entities/mergeQueue.js";
import { MergeIntoParentOutput } from "../workspaceQueries.js";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * The merge queue of a parent workspace (docs/workspaces.md, "The merge
 * queue"). Loom's own: the app enqueues and cancels after it checked the
 * caller; the queue's effect begins and ends each entry.
 */

const Entry = { parentThreadId: IdSchema, entryId: IdSchema };

/** Queue a worktree child's branch for a merge into its parent. */
export const MergeQueueEnqueueCommandSchema = command(
  "merge-queue.enqueue",
  z
    .object({
      ...Entry,
      childThreadId: IdSchema,
      onRefused: z.enum(["report", "child"]),
      commitChild: z.boolean(),
      message: z.string().min(1).max(10_000).nullable(),
    })
    .strict(),
);

/** Take a queued entry out of the queue. */
export const MergeQueueCancelCommandSchema = command("merge-queue.cancel", z.object(Entry).strict());

/** The queue begins merging an entry (again, after a cut-short attempt). */
export const MergeQueueStartCommandSchema = command("merge-queue.start", z.object(Entry).strict());

/** How the entry's merge ended: its result (merged, returned to the child) or why it was refused. */
export const MergeQueueFinishCommandSchema = command(
  "merge-queue.finish",
  z
    .object({
      ...Entry,
      status: MergeQueueEndStatusSchema,
      result: MergeIntoParentOutput.nullable(),
      failure: MergeQueueFailureSchema.nullable(),
    })
    .strict(),
);

export type MergeQueueEnqueueCommand = z.infer<typeof MergeQueueEnqueueCommandSchema>;
export type MergeQueueCancelCommand = z.infer<typeof MergeQueueCancelCommandSchema>;
export type MergeQueueStartCommand = z.infer<typeof MergeQueueStartCommandSchema>;
export type MergeQueueFinishCommand = z.infer<typeof MergeQueueFinishCommandSchema>;
