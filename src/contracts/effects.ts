import { z } from "zod";
import { CheckpointTriggerSchema } from "./entities/checkpoints.js";

/**
 * Outbox effects (DESIGN.md invariant 4): one table from effect kind to its
 * payload schema, whether it may run again after a crash, and its retry
 * policy. Core emits effects through this table, the outbox worker decodes
 * payloads with it, and handlers receive typed payloads: no casts.
 *
 * A replay-safe effect survives a restart and is retried; a process-bound one
 * dies with the process (boot reconciliation ends the run it belonged to).
 */
export const EffectKind = {
  /** Start the run's turn on the thread's provider session (opening one if needed). */
  startTurn: "provider.turn.start",
  /** Add a message to the running turn. */
  steerTurn: "provider.turn.steer",
  /** Ask the provider to stop the running turn. */
  interruptTurn: "provider.turn.interrupt",
  /** Hand an answer (approval decision, question answers) to the provider. */
  respondRequest: "provider.request.respond",
  /** Tell the driver to stop background work of a run (a background shell, a subagent) that was cancelled. */
  cancelBackgroundWork: "provider.background-work.cancel",
  /** Release the thread's provider session and its process. */
  releaseSession: "provider.session.release",
  /** Create the thread's worktree (or find it after a restart) and run the project's setup command. */
  prepareWorkspace: "workspace.prepare",
  /** Snapshot a thread's workspace as a checkpoint and record it. */
  captureCheckpoint: "checkpoint.capture",
  /** Restore a checkpoint for a rollback_recovery run, then release or fail it. */
  restoreCheckpoint: "checkpoint.restore",
  /** A deleted thread's worktree: keep a last checkpoint, then remove the worktree. */
  cleanupWorkspace: "workspace.cleanup",
  /** Merge a merge queue entry into its parent (checked, when the project has a checkCommand) and record how it ended. */
  mergeQueueEntry: "merge-queue.merge",
} as const;
export type EffectKind = (typeof EffectKind)[keyof typeof EffectKind];

export const SessionReleaseReasonSchema = z.enum(["idle_reaped", "detached", "crashed", "shutdown", "start_failed", "server_restarted", "thread_deleted"]);
export type SessionReleaseReason = z.infer<typeof SessionReleaseReasonSchema>;

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 means no retry. */
  readonly maxAttempts: number;
  /** Delay before the second attempt; doubled for each later one. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export interface EffectSpec<P extends z.ZodType = z.ZodType> {
  readonly payload: P;
  readonly replaySafe: boolean;
  readonly retry: RetryPolicy;
}

const NO_RETRY: RetryPolicy = { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 };
const BACKOFF: RetryPolicy = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 30_000 };

function spec<P extends z.ZodType>(payload: P, replaySafe: boolean, retry: RetryPolicy): EffectSpec<P> {
  return { payload, replaySafe, retry };
}

const ThreadRun = { threadId: z.string().min(1), runId: z.string().min(1) };

export const EFFECTS = {
  "provider.turn.start": spec(z.object(ThreadRun), false, NO_RETRY),
  "provider.turn.steer": spec(z.object({ ...ThreadRun, messageId: z.string().min(1), text: z.string() }), false, NO_RETRY),
  "provider.turn.interrupt": spec(z.object(ThreadRun), true, BACKOFF),
  "provider.request.respond": spec(
    z.object({
      ...ThreadRun,
      requestId: z.string().min(1),
      nativeRequestId: z.string().min(1).nullable(),
      response: z.record(z.string(), z.unknown()),
    }),
    false,
    NO_RETRY,
  ),
  // Stopping stopped work is harmless; after a restart the process that ran it is gone and there is nothing to stop.
  "provider.background-work.cancel": spec(z.object({ ...ThreadRun, nativeTaskIds: z.array(z.string().min(1)) }), true, BACKOFF),
  "provider.session.release": spec(
    z.object({ threadId: z.string().min(1), providerSessionId: z.string().min(1).optional(), reason: SessionReleaseReasonSchema, message: z.string() }),
    true,
    BACKOFF,
  ),
  // Workspace effects (src/app/workspaces/effects.ts). A capture names its
  // checkpoint id; replayed, it finds the checkpoint recorded or its ref
  // written (the library answers with the stored one), so it runs again
  // safely. Preparing and restoring belong to a run that boot reconciliation
  // ends, so they are lost with the process.
  "workspace.prepare": spec(z.object(ThreadRun), false, NO_RETRY),
  "checkpoint.capture": spec(
    z.object({
      threadId: z.string().min(1),
      checkpointId: z.string().min(1),
      runId: z.string().min(1).nullable(),
      trigger: CheckpointTriggerSchema,
      /** child_branch: the worktree child's prepared run waiting for this checkpoint. */
      forRunId: z.string().min(1).nullable(),
    }),
    true,
    BACKOFF,
  ),
  "checkpoint.restore": spec(z.object({ ...ThreadRun, checkpointId: z.string().min(1), force: z.boolean() }), false, NO_RETRY),
  "workspace.cleanup": spec(z.object({ threadId: z.string().min(1) }), true, BACKOFF),
  // On the stream merge-queue:<parent>, one at a time per parent; replayed
  // after a restart (or by another node once the lease lapses), the merge is
  // made again, which a merge already made answers up_to_date.
  "merge-queue.merge": spec(z.object({ parentThreadId: z.string().min(1), entryId: z.string().min(1) }), true, BACKOFF),
} as const satisfies { readonly [K in EffectKind]: EffectSpec };

export type EffectPayload<K extends EffectKind> = z.infer<(typeof EFFECTS)[K]["payload"]>;

export const EFFECT_KINDS: readonly EffectKind[] = Object.values(EffectKind);

export function isEffectKind(kind: string): kind is EffectKind {
  return Object.hasOwn(EFFECTS, kind);
}

/** Milliseconds to wait before the next attempt after `attempts` failed ones, or null when the policy is spent. */
export function retryDelay(policy: RetryPolicy, attempts: number): number | null {
  if (attempts >= policy.maxAttempts) return null;
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempts - 1));
}
