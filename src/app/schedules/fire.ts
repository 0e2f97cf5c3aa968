import type { FireCause, ScheduledFire } from "../../contracts/entities/scheduledTasks.js";
import type { Ceiling } from "../../contracts/modes.js";
import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";
import { fail } from "../errors.js";

export interface FireRequest {
  readonly scheduledTaskId: string;
  readonly cause: FireCause;
  /** The due instant (timed) or the request time (manual, webhook), ISO-8601. */
  readonly dueAt: string;
  readonly instants: number;
  readonly nextFireAt: string | null;
  /**
   * What makes this fire unique: the due instant for timed fires (so every
   * node and every retry derives the same command), the delivery's dedupe
   * value for webhooks, a fresh id for run now.
   */
  readonly fireKey: string;
  readonly context: string | null;
  /** run now by a caller: whose modes the work may not exceed (the decider checks); timed fires and webhooks have none. */
  readonly ceiling?: Ceiling;
}

/** The fire command's id for a task and fire key: the only thing that decides whether two fires are one. */
export function fireCommandId(scheduledTaskId: string, fireKey: string): string {
  return joinId("cmd", "scheduled-fire", scheduledTaskId, fireKey);
}

/**
 * Fire a task once, through the one path every cause shares. A repeated fire
 * key is answered with the first fire's receipt and writes nothing; the
 * answer is then the task's recorded fire for that key, or null when the
 * first one was refused or has since been replaced by a later fire.
 */
export async function fireScheduledTask(ctx: AppContext, request: FireRequest): Promise<{ readonly fire: ScheduledFire | null; readonly duplicate: boolean }> {
  const commandId = fireCommandId(request.scheduledTaskId, request.fireKey);
  const executed = await execute(ctx, {
    type: "scheduled-task.fire",
    commandId,
    data: {
      scheduledTaskId: request.scheduledTaskId,
      dueAt: request.dueAt,
      cause: request.cause,
      instants: request.instants,
      nextFireAt: request.nextFireAt,
      threadId: joinId("thread", "scheduled", request.scheduledTaskId, request.fireKey),
      runId: joinId("run", "scheduled", request.scheduledTaskId, request.fireKey),
      messageId: joinId("message", "scheduled", request.scheduledTaskId, request.fireKey),
      context: request.context,
      ...(request.ceiling === undefined ? {} : { ceiling: request.ceiling }),
    },
  });
  for (const event of executed.events) {
    if (event.type === "scheduled-task.updated") return { fire: (event.data as { fire: ScheduledFire | null }).fire, duplicate: false };
  }
  const task = ctx.orchestrator.state.scheduledTasks.get(request.scheduledTaskId) ?? fail("invalid_request", `no scheduled task ${request.scheduledTaskId}`);
  return { fire: task.lastFire?.dueAt === request.dueAt && task.lastFire.cause === request.cause ? task.lastFire : null, duplicate: executed.duplicate };
}
