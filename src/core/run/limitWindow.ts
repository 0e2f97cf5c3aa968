import type { LimitWindowRecordCommand } from "../../contracts/commands/failoverCommands.js";
import { limitWindowEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept } from "../decision.js";
import type { OrchestrationState } from "../state.js";

/**
 * A provider instance's usage limit window (docs/limits.md, "Unavailable
 * until the reset"): recorded in the log as a session meets the limit, so
 * every node sharing the log holds the instance unavailable until the
 * reset. A reset already past, or one no later than the window recorded,
 * changes nothing (a retry, or a second session meeting the same limit).
 */
export function decideLimitWindowRecord(state: OrchestrationState, command: LimitWindowRecordCommand, ctx: DecideContext): Decision {
  const { providerInstanceId, message } = command.data;
  const resetMs = Date.parse(command.data.resetAt);
  if (resetMs <= Date.parse(ctx.now)) return accept([]);
  const known = state.limitWindows.get(providerInstanceId);
  if (known !== undefined && Date.parse(known.resetAt) >= resetMs) return accept([]);
  return accept([limitWindowEvent({ providerInstanceId, resetAt: new Date(resetMs).toISOString(), message, recordedAt: ctx.now })]);
}
