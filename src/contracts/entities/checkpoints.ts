import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { CountSchema, EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/** How a file differs from the previous checkpoint (also used by file_change turn items). */
export const FileChangeKind = {
  added: "added",
  modified: "modified",
  deleted: "deleted",
  renamed: "renamed",
} as const;
export type FileChangeKind = (typeof FileChangeKind)[keyof typeof FileChangeKind];
export const FileChangeKindSchema = z.enum(FileChangeKind);

export const CheckpointFileSchema = z.object({
  path: z.string().min(1),
  /** The old path of a renamed file, else null. */
  previousPath: z.string().min(1).nullable(),
  kind: FileChangeKindSchema,
  /** Lines added and removed; both 0 for a binary file. */
  additions: CountSchema,
  deletions: CountSchema,
  /** Git sees the content as binary (no line counts). Absent in records written before the field existed. */
  binary: z.boolean().default(false),
});
export type CheckpointFile = z.infer<typeof CheckpointFileSchema>;

/**
 * The checkpoint state machine (spec 004 §2): `ready` can be rolled back to;
 * `missing` lost its ref; `error` failed to capture; `stale` was superseded
 * by a rollback to an earlier checkpoint.
 */
export const CheckpointStatus = {
  ready: "ready",
  missing: "missing",
  error: "error",
  stale: "stale",
} as const;
export type CheckpointStatus = (typeof CheckpointStatus)[keyof typeof CheckpointStatus];
export const CheckpointStatusSchema = z.enum(CheckpointStatus);

/**
 * A workspace whose snapshots are numbered together. Checkpoints in one scope
 * share one working tree, so a rollback only ever moves within its scope.
 */
export const CheckpointScopeSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  /** Absolute path of the working tree the scope snapshots. */
  workspacePath: z.string().min(1),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type CheckpointScope = z.infer<typeof CheckpointScopeSchema>;

/**
 * Why a checkpoint was taken: before and after a turn that may write, before
 * a worktree child branches from its parent's current state, and once more
 * before a deleted thread's worktree is removed.
 */
export const CheckpointTrigger = {
  turnStart: "turn_start",
  turnEnd: "turn_end",
  childBranch: "child_branch",
  threadDeleted: "thread_deleted",
} as const;
export type CheckpointTrigger = (typeof CheckpointTrigger)[keyof typeof CheckpointTrigger];
export const CheckpointTriggerSchema = z.enum(CheckpointTrigger);

/**
 * A snapshot of the workspace after a run (spec 004 §2). `ref` is opaque to
 * everything but the checkpoint store (e.g. a hidden git ref). `files` lists
 * what changed since the previous checkpoint of the same scope.
 */
export const CheckpointSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  scopeId: EntityIdSchema,
  ordinalWithinScope: z.number().int().nonnegative(),
  appRunOrdinal: z.number().int().nonnegative(),
  runId: NullableEntityIdSchema,
  nodeId: NullableEntityIdSchema,
  ref: z.string().min(1),
  status: CheckpointStatusSchema,
  files: z.array(CheckpointFileSchema),
  /** Loom's additions: why it was taken, the commit it names, and why a `missing` or `error` one has no snapshot. */
  trigger: CheckpointTriggerSchema.optional(),
  commit: z.string().min(1).nullable().optional(),
  reason: z.string().nullable().optional(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;

/**
 * A rollback as `checkpoint.rollback` recorded it (the data of
 * `checkpoint.rollback-requested`): the checkpoint restored, the run it
 * interrupted first, and the rollback_recovery run that restores the files
 * and then tells the agent what was rolled back.
 */
export const CheckpointRollbackSchema = z.object({
  threadId: EntityIdSchema,
  checkpointId: EntityIdSchema,
  scopeId: EntityIdSchema,
  ordinalWithinScope: z.number().int().nonnegative(),
  interruptedRunId: NullableEntityIdSchema,
  recoveryRunId: EntityIdSchema,
  /** Overwrite uncaptured changes in the way instead of failing. */
  force: z.boolean(),
  requestedAt: IsoTimeSchema,
});
export type CheckpointRollback = z.infer<typeof CheckpointRollbackSchema>;
