import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";
import { followChanges } from "../orchestration/changeFeed.js";
import type { StreamHandle } from "../orchestration/subscriptions.js";

/** A thread waiting for the usage limit that stopped its run to reset (docs/limits.md, "Waiting for the reset"). */
export interface LimitResume {
  readonly threadId: string;
  /** The run the limit stopped. */
  readonly runId: string;
  /** When the limit resets, ISO-8601: the resume is due then. */
  readonly resetAt: string;
}

/** The events that change a recovery: recorded or cleared, or its thread deleted. */
const RECOVERY_EVENTS: ReadonlySet<string> = new Set(["thread.limit-recovery-updated", "thread.deleted"]);

/** Every live thread with a limit recovery: what the limit resumer's timer is armed for. */
export function limitResumes(ctx: AppContext): LimitResume[] {
  const due: LimitResume[] = [];
  for (const thread of ctx.orchestrator.state.threads.values()) {
    const recovery = thread.limitRecovery ?? null;
    if (thread.deletedAt === null && recovery !== null) due.push({ threadId: thread.id, runId: recovery.runId, resetAt: recovery.resetAt });
  }
  return due;
}

/** `onChange` hears every later change to a recovery, on any node sharing the log. Resolves once the feed is live. */
export function followLimitResumes(ctx: AppContext, onChange: () => void): Promise<StreamHandle> {
  return followChanges(ctx, RECOVERY_EVENTS, () => onChange());
}

/**
 * The limit reset: resume the thread's work (or, with autoResume off, just
 * clear the wait). The command id is derived from (thread, run, reset), and
 * the decider refuses a recovery that is no longer the thread's
 * (limit_recovery_stale), so a retry, a restart or a second node resume it
 * once.
 */
export async function resumeAfterLimit(ctx: AppContext, due: LimitResume): Promise<void> {
  await execute(ctx, {
    type: "thread.limit-recovery.resume",
    commandId: joinId("limit-resume", due.threadId, due.runId, due.resetAt),
    data: { threadId: due.threadId, runId: due.runId, resetAt: due.resetAt },
  });
}
