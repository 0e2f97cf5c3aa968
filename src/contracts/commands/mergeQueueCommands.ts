import { z } from "zod";
import { MergeQueueEndStatusSchema, MergeQueueFailureSchema, MergeResolutionSchema, MergeResolverSchema, OnRefusedSchema } from "../entities/mergeQueue.js";
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
      onRefused: OnRefusedSchema,
      /** onRefused resolver: who resolves (required then, absent otherwise). */
      resolver: MergeResolverSchema.optional(),
      commitChild: z.boolean(),
      message: z.string().min(1).max(10_000).nullable(),
      /** Queued from a run still going (t3_thread_merge_back): while either thread has a run, the entry waits `waiting_for_idle` instead of joining the queue. */
      waitForIdle: z.boolean().optional(),
    })
    .strict(),
);

/** Neither thread of an entry waiting for idle threads has a run going or queued any more: it joins the queue. */
export const MergeQueueReadyCommandSchema = command("merge-queue.ready", z.object(Entry).strict());

/** Take a queued (or waiting) entry out of the queue. */
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

/**
 * The merging entry was refused (a conflict, a failed check) and goes to its
 * resolver: a delegated child of the parent (delegated_task.request, with its
 * budgets and privilege ceiling) in a worktree at `baseCommit`, the merge in
 * progress. The entry waits `resolving` at the head of its queue, so the
 * resolver's result lands on the state it resolved against.
 */
export const MergeQueueResolveCommandSchema = command(
  "merge-queue.resolve",
  z
    .object({
      ...Entry,
      /** The merge in progress the resolver's worktree starts at, as its resolution records it. */
      ...MergeResolutionSchema.pick({ baseCommit: true, parentCommit: true, childCommit: true, workspaceCode: true, files: true, check: true }).shape,
      /** The resolver's ids, its message (the instructions) and its brief (Loom's account of the merge, the context of its run). */
      taskId: IdSchema,
      resolverThreadId: IdSchema,
      resolverRunId: IdSchema,
      resolverMessageId: IdSchema,
      title: z.string().min(1).max(500),
      prompt: z.string().min(1).max(210_000),
      brief: z.string().min(1).max(200_000),
    })
    .strict(),
);

/** The resolver's task ended: a completed one queues the entry again (it merges the resolver's branch), any other ends it failed. */
export const MergeQueueResolvedCommandSchema = command("merge-queue.resolved", z.object(Entry).strict());

export type MergeQueueReadyCommand = z.infer<typeof MergeQueueReadyCommandSchema>;
export type MergeQueueResolveCommand = z.infer<typeof MergeQueueResolveCommandSchema>;
export type MergeQueueResolvedCommand = z.infer<typeof MergeQueueResolvedCommandSchema>;
export type MergeQueueEnqueueCommand = z.infer<typeof MergeQueueEnqueueCommandSchema>;
export type MergeQueueCancelCommand = z.infer<typeof MergeQueueCancelCommandSchema>;
export type MergeQueueStartCommand = z.infer<typeof MergeQueueStartCommandSchema>;
export type MergeQueueFinishCommand = z.infer<typeof MergeQueueFinishCommandSchema>;
