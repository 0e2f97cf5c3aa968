import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { CheckpointFileSchema } from "../entities/checkpoints.js";

/**
 * Prepared runs and checkpoint rollback (spec 004 §3.1: prepared-run.release,
 * prepared-run.progress, prepared-run.fail, prepared-run.retry,
 * checkpoint.rollback; internal checkpoint.rollback.fail). Loom's workspace
 * effects report a preparation's progress and outcome with these; an owner
 * may send them too (docs/workspaces.md).
 */

/** Most characters of setup output a command carries: the end of it, which holds the error. */
export const MAX_SETUP_OUTPUT = 16_000;

const SetupReportSchema = z
  .object({
    /** The command line as configured. */
    command: z.string().min(1).max(10_000),
    cwd: z.string().min(1),
    /** The end of the combined output so far. */
    output: z.string().max(MAX_SETUP_OUTPUT),
    /** Output was dropped from the front. */
    outputTruncated: z.boolean(),
    /** Set once the command ended. */
    exitCode: z.number().int().nullable().optional(),
    durationMs: z.number().int().nonnegative().optional(),
  })
  .strict();
export type SetupReport = z.infer<typeof SetupReportSchema>;

export const WorktreeReportSchema = z
  .object({
    path: z.string().min(1),
    branch: z.string().min(1),
    baseCommit: z.string().min(1),
  })
  .strict();

export const PreparedRunProgressCommandSchema = command(
  "prepared-run.progress",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      step: z.enum(["worktree", "setup"]),
      /** The worktree was created (or found after a restart): it is recorded on the thread. */
      worktree: WorktreeReportSchema.optional(),
      /** The setup command's output so far. */
      setup: SetupReportSchema.optional(),
    })
    .strict(),
);

export const PreparedRunReleaseCommandSchema = command(
  "prepared-run.release",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      /** The finished setup command, when one ran. */
      setup: SetupReportSchema.optional(),
      /** rollback: what the restore changed, and the uncaptured changes it overwrote (force). */
      restoredFiles: z.array(CheckpointFileSchema).max(100_000).optional(),
      overwritten: z.array(z.string().min(1)).max(100_000).optional(),
    })
    .strict(),
);

export const PreparedRunFailCommandSchema = command(
  "prepared-run.fail",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      code: z.string().min(1).max(200),
      message: z.string().min(1).max(20_000),
      /** Files the failure is about (files in the way, a dirty worktree). */
      files: z.array(z.string().min(1)).max(10_000).optional(),
      setup: SetupReportSchema.optional(),
    })
    .strict(),
);

/** Prepare a failed prepared run again: a new run with the same message (a terminal run never changes). */
export const PreparedRunRetryCommandSchema = command(
  "prepared-run.retry",
  z.object({ threadId: IdSchema, runId: IdSchema, newRunId: IdSchema.optional() }).strict(),
);

/** Restore the thread's workspace to a checkpoint, then tell the agent in a rollback_recovery run. */
export const CheckpointRollbackCommandSchema = command(
  "checkpoint.rollback",
  z
    .object({
      threadId: IdSchema,
      checkpointId: IdSchema,
      /** Overwrite uncaptured changes in the way instead of failing. */
      force: z.boolean().optional(),
      recoveryRunId: IdSchema.optional(),
    })
    .strict(),
);

/** The restore could not apply: the rollback_recovery run fails, listing the files in conflict. */
export const CheckpointRollbackFailCommandSchema = command(
  "checkpoint.rollback.fail",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      checkpointId: IdSchema,
      code: z.string().min(1).max(200),
      message: z.string().min(1).max(20_000),
      files: z.array(z.string().min(1)).max(10_000),
    })
    .strict(),
);

export type PreparedRunProgressCommand = z.infer<typeof PreparedRunProgressCommandSchema>;
export type PreparedRunReleaseCommand = z.infer<typeof PreparedRunReleaseCommandSchema>;
export type PreparedRunFailCommand = z.infer<typeof PreparedRunFailCommandSchema>;
export type PreparedRunRetryCommand = z.infer<typeof PreparedRunRetryCommandSchema>;
export type CheckpointRollbackCommand = z.infer<typeof CheckpointRollbackCommandSchema>;
export type CheckpointRollbackFailCommand = z.infer<typeof CheckpointRollbackFailCommandSchema>;
