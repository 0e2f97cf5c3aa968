import { EffectKind } from "../../contracts/effects.js";
import type { MessageDispatchCommand } from "../../contracts/commands/runCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, type ProviderFacts, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { Changes } from "./changes.js";
import { activeRun, enqueue, newRun, queuedRuns, requestInterrupt, providerNotSet, startRun, threadProvider, turnFacts } from "./lifecycle.js";
import { isProviderControlMessage, isProviderControlTurn } from "./controlMessages.js";
import { recordFollowUp } from "../delegation/followUps.js";
import { exhaustedBudget, exhaustedText } from "../budgets/budgets.js";

/**
 * A running turn accepts steering only while its provider (`facts`, the run's
 * own instance: see turnFacts) can steer, the provider is working and no stop
 * has reached it.
 */
export function canSteer(run: Run | null, facts: ProviderFacts | null): run is Run {
  return run !== null && facts !== null && facts.capabilities.steering && run.status === "running" && run.interruptRequestedAt === null;
}

/**
 * message.dispatch: the send modes of t3_thread_send (spec 000).
 * - auto: start an idle thread, steer a steerable running turn, else queue;
 * - queue: a separate follow-up run after active work (starts at once when idle);
 * - steer: requires a steerable running turn;
 * - restart: requires an active turn the provider can stop; it is interrupted
 *   and the message runs next, ahead of other queued messages.
 */
export function decideMessageDispatch(state: OrchestrationState, command: MessageDispatchCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const providerId = threadProvider(thread);
  if (providerId === null) return providerNotSet(thread.id);
  const facts = ctx.providers(providerId);
  if (facts === null) return reject("provider_unavailable", `provider instance ${providerId} is not available`);

  // New work under a budget that ran out (either policy) is refused; a system re-send of a message already accepted is not new work.
  if (command.data.createdBy !== "system") {
    const exhausted = exhaustedBudget(state, thread.id, ctx.now);
    if (exhausted !== null) return reject("budget_exceeded", `${exhaustedText(exhausted)}: thread ${thread.id} takes no new message under it`);
  }

  const changes = new Changes(state, ctx);
  const active = activeRun(changes, thread.id);
  const idle = active === null && !queuedRuns(changes, thread.id).some((run) => !run.held);
  const mode = command.data.mode ?? "auto";
  // A provider control command (/compact, /logout) neither steers nor restarts, nor is a turn of one steered or restarted.
  const controlMessage = isProviderControlMessage(command.data.text);
  const controlTurn = active !== null && isProviderControlTurn(changes, active);
  switch (mode) {
    case "auto":
      if (active === null) return startNewRun(changes, thread, facts, command, idle ? "start" : "back");
      if (!controlMessage && !controlTurn && canSteer(active, turnFacts(ctx, active))) return steer(changes, active, command);
      return startNewRun(changes, thread, facts, command, "back");
    case "queue":
      return startNewRun(changes, thread, facts, command, idle ? "start" : "back");
    case "steer": {
      if (active === null) return reject("thread_not_sendable", `thread ${thread.id} has no active turn to steer`);
      const activeFacts = turnFacts(ctx, active);
      if (!canSteer(active, activeFacts)) {
        return reject("thread_not_sendable", `the active turn of thread ${thread.id} cannot be steered (${steerBlocker(active, activeFacts)})`);
      }
      if (controlMessage || controlTurn) return reject("thread_not_sendable", controlRefusal(controlMessage, "steered into a turn", "steered"));
      return steer(changes, active, command);
    }
    case "restart": {
      if (active === null) return reject("thread_not_sendable", `thread ${thread.id} has no active turn to restart`);
      const activeFacts = turnFacts(ctx, active);
      if (activeFacts?.capabilities.interrupt !== true) {
        return reject("thread_not_sendable", `provider instance ${active.providerInstanceId ?? "?"} cannot stop a turn, so it cannot restart one`);
      }
      if (active.interruptRequestedAt !== null) {
        return reject("thread_not_sendable", `a stop has already reached the active turn of thread ${thread.id}`);
      }
      if (active.status === "settling_background_work") {
        return reject("thread_not_sendable", `the turn of thread ${thread.id} is over and its run is settling background work: interrupt the run or queue the message`);
      }
      if (controlMessage || controlTurn) return reject("thread_not_sendable", controlRefusal(controlMessage, "restart a turn", "restarted"));
      requestInterrupt(changes, active, command.data.createdBy ?? "user", "restarted with a new message");
      // A provider that can stop a turn but not restart it with new input: the
      // message goes ahead of other queued messages, after any unheld delegated
      // result that survives the stop (spec 000, t3_thread_send).
      return startNewRun(changes, thread, facts, command, activeFacts.capabilities.restart ? "front" : "after-delegated-results");
    }
    default: {
      const exhaustive: never = mode;
      return exhaustive;
    }
  }
}

function controlRefusal(controlMessage: boolean, messageCannot: string, turnCannot: string): string {
  return controlMessage
    ? `a provider control command (${PROVIDER_CONTROL_COMMANDS_TEXT}) cannot ${messageCannot}; send it with mode queue`
    : `the active turn runs a provider control command (${PROVIDER_CONTROL_COMMANDS_TEXT}) and cannot be ${turnCannot}`;
}

const PROVIDER_CONTROL_COMMANDS_TEXT = "/compact, /logout";

function steerBlocker(run: Run, facts: ProviderFacts | null): string {
  if (facts === null) return `its provider instance ${run.providerInstanceId ?? "?"} is not available`;
  if (!facts.capabilities.steering) return "the provider does not support steering";
  if (run.interruptRequestedAt !== null) return "a stop has already reached it";
  return `it is ${run.status}`;
}

function userMessage(changes: Changes, threadId: string, runId: string, messageId: string, command: MessageDispatchCommand) {
  return changes.addItem(threadId, runId, {
    type: "user_message",
    messageId,
    text: command.data.text,
    createdBy: command.data.createdBy ?? "user",
    creationSource: command.data.creationSource ?? "api",
  });
}

function startNewRun(
  changes: Changes,
  thread: AppThread,
  facts: ProviderFacts,
  command: MessageDispatchCommand,
  placement: "start" | "front" | "back" | "after-delegated-results",
): Decision {
  const runId = command.data.runId ?? changes.ctx.allocate.run();
  if (changes.run(runId) !== undefined) return reject("thread_not_sendable", `run ${runId} already exists`);
  const messageId = command.data.messageId ?? changes.ctx.allocate.message();
  const kind = command.data.runKind ?? "user_turn";
  const run = newRun(changes, thread, facts, { runId, kind, messageId });
  userMessage(changes, thread.id, run.id, messageId, command);
  if (placement === "start") startRun(changes, run);
  else if (placement === "after-delegated-results") enqueueAfterDelegatedResults(changes, run);
  else enqueue(changes, run, placement);
  // A message to a finished task's child is a follow-up the parent sees running (spec 000).
  if (kind !== "system_follow_up") recordFollowUp(changes, thread.id, run.id);
  return changes.done();
}

/**
 * Place a run at the front of its thread's queue, but behind the queued,
 * unheld runs that carry delegated tasks' results to this thread: those
 * still run first.
 */
function enqueueAfterDelegatedResults(changes: Changes, run: Run): void {
  const carriers = new Set<string>();
  for (const task of changes.allTasks()) {
    if (task.parentThreadId !== run.threadId) continue;
    for (const notice of task.notices) if (notice.kind === "completion" && notice.delivery === "queued" && notice.runId !== null) carriers.add(notice.runId);
  }
  const queue = queuedRuns(changes, run.threadId).filter((queued) => queued.id !== run.id);
  const first = queue.filter((queued) => !queued.held && carriers.has(queued.id));
  const order = [...first, run, ...queue.filter((queued) => !first.includes(queued))];
  order.forEach((queued, rank) => {
    if (queued.id === run.id) changes.updateRun(changes.run(run.id)!, { status: "queued", queueRank: rank });
    else if (queued.queueRank !== rank) changes.updateRun(queued, { queueRank: rank });
  });
}

function steer(changes: Changes, active: Run, command: MessageDispatchCommand): Decision {
  const messageId = command.data.messageId ?? changes.ctx.allocate.message();
  userMessage(changes, active.threadId, active.id, messageId, command);
  changes.effect(EffectKind.steerTurn, active.threadId, { threadId: active.threadId, runId: active.id, messageId, text: command.data.text });
  return changes.done();
}
