import type { LimitRecoveryFailOverCommand } from "../../contracts/commands/failoverCommands.js";
import type { LimitCause } from "../../contracts/thread.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import { switchProvider } from "../lineage/switch.js";
import type { OrchestrationState } from "../state.js";
import { Changes } from "./changes.js";
import { threadProvider } from "./lifecycle.js";
import { endRecovery, movedOn, namedRecovery } from "./limitWait.js";
import { deliverNotice } from "./notify.js";

/**
 * Failover (docs/limits.md, "Failover"): a thread a usage limit stopped
 * moves to another instance and its work goes on there now rather than at
 * the reset. One decision: the recovery ends (and the snooze it put on the
 * thread), the thread switches provider (a context handoff with its item
 * when the target has not seen every run), a notice says where the work
 * went and why, a delegated task is recorded on the new instance, and,
 * unless the thread's work already went on, a follow-up run continues it
 * there. A delegated task waiting on the
 * resume waits for that run instead (settleTask).
 */

/** The title of the follow-up that continues the work on the new instance. */
export const FAILOVER_TITLE = "Moved to another provider";

export function failoverText(from: string | null, to: string, cause: LimitCause = "usage_limit"): string {
  const stopped = cause === "outage" ? "failed with provider errors Loom's retries could not get past" : "was stopped by a usage limit";
  return `Your previous turn${from === null ? "" : ` on ${from}`} ${stopped}, so your work moved to ${to}. The thread's context so far is above. Continue the work you were doing when it stopped, from where you left off, and finish it as you were asked.`;
}

/** The timeline notice of a failover, e.g. "Moved to codex after claude's usage limit (it resets at …)". */
export function failoverNotice(from: string | null, to: string, resetAt: string, trigger: LimitRecoveryFailOverCommand["data"]["trigger"], cause: LimitCause = "usage_limit"): string {
  const whose = from === null ? "a" : `${from}'s`;
  const why = cause === "outage" ? `${whose} errors past Loom's retries (tried again at ${resetAt})` : `${whose} usage limit (it resets at ${resetAt})`;
  return trigger === "requested" ? `Moved to ${to} on request, instead of waiting for ${why}.` : `Moved to ${to} after ${why}.`;
}

export function decideLimitFailOver(state: OrchestrationState, command: LimitRecoveryFailOverCommand, ctx: DecideContext): Decision {
  const named = namedRecovery(state, command.data);
  if (named.kind === "rejected") return named;
  const { thread, recovery } = named;
  const target = command.data.providerInstanceId;
  const facts = ctx.providers(target);
  if (facts === null) return reject("provider_unavailable", `provider instance ${target} is not available`);
  const from = threadProvider(thread);
  if (from === target) return reject("provider_unchanged", `thread ${thread.id} already runs on ${target}`);
  const changes = new Changes(state, ctx);
  const cleared = endRecovery(changes, thread, recovery);
  switchProvider(changes, cleared, target, command.data.model, facts.driver);
  // A delegated task runs where its child thread now runs: task_status and the result say so.
  const taskId = state.taskByChildThread.get(thread.id);
  const task = taskId === undefined ? undefined : changes.task(taskId);
  const subagent = taskId === undefined ? undefined : changes.subagent(taskId);
  if (task !== undefined && subagent !== undefined) {
    changes.putTask({ ...subagent, providerInstanceId: target, driver: facts.driver, updatedAt: ctx.now }, { ...task, providerInstanceId: target, model: command.data.model, updatedAt: ctx.now });
  }
  changes.addItem(thread.id, null, { type: "system_notice", level: "info", text: failoverNotice(from, target, recovery.resetAt, command.data.trigger, recovery.cause) });
  if (!movedOn(changes, recovery, thread.id)) {
    deliverNotice(changes, thread.id, { title: FAILOVER_TITLE, text: failoverText(from, target, recovery.cause), sourceThreadId: null }, { allowSteer: false });
  }
  settleTask(changes, thread.id);
  return changes.done();
}
