import { EffectKind } from "../../contracts/effects.js";
import type {
  QueuedMessagePromoteToSteerCommand,
  QueuedRunCancelCommand,
  QueuedRunEditCommand,
  QueuedRunReorderCommand,
  QueuedRunStartCommand,
} from "../../contracts/commands/runCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { type DecideContext, type Decision, type Rejected, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { settleTask } from "../delegation/settle.js";
import { Changes } from "./changes.js";
import { activeRun, queuedRuns, startRun, turnFacts } from "./lifecycle.js";
import { canSteer } from "./send.js";

type Found = { kind: "found"; changes: Changes; run: Run } | Rejected;

function queuedRun(state: OrchestrationState, ctx: DecideContext, threadId: string, runId: string): Found {
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const run = changes.run(runId);
  if (run === undefined || run.threadId !== threadId) return reject("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  if (run.status !== "queued" || run.queueRank === null) return reject("run_not_queued", `run ${runId} is ${run.status}, not queued`);
  return { kind: "found", changes, run };
}

function messageItem(changes: Changes, run: Run): TurnItemOf<"user_message"> | undefined {
  const items = changes.state.turnItems.get(run.threadId) ?? [];
  return items.find((item): item is TurnItemOf<"user_message"> => item?.type === "user_message" && item.messageId === run.messageId);
}

/** queued-run.start: run a queued run now; the thread must be idle. */
export function decideQueuedRunStart(state: OrchestrationState, command: QueuedRunStartCommand, ctx: DecideContext): Decision {
  const found = queuedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const active = activeRun(found.changes, command.data.threadId);
  if (active !== null) return reject("thread_busy", `run ${active.id} is still active in thread ${command.data.threadId}`);
  startRun(found.changes, found.run);
  return found.changes.done();
}

/** queued-run.reorder: the full new order of the thread's queued runs. */
export function decideQueuedRunReorder(state: OrchestrationState, command: QueuedRunReorderCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const queue = queuedRuns(changes, found.thread.id);
  const wanted = command.data.runIds;
  const sameSet = wanted.length === queue.length && new Set(wanted).size === wanted.length && wanted.every((id) => queue.some((r) => r.id === id));
  if (!sameSet) return reject("invalid_reorder", `runIds must list each of the ${queue.length} queued runs exactly once`);
  if (wanted.every((id, index) => queue[index]!.id === id)) return reject("invalid_reorder", "the queue is already in that order");
  wanted.forEach((id, index) => {
    const run = changes.run(id)!;
    if (run.queueRank !== index) changes.updateRun(run, { queueRank: index });
  });
  return changes.done();
}

/** queued-run.cancel: the run ends cancelled without ever starting; its message stays in the timeline. */
export function decideQueuedRunCancel(state: OrchestrationState, command: QueuedRunCancelCommand, ctx: DecideContext): Decision {
  const found = queuedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  found.changes.updateRun(found.run, { status: "cancelled", queueRank: null, held: false, endReason: "cancelled", endedAt: ctx.now });
  settleTask(found.changes, found.run.threadId);
  return found.changes.done();
}

/** queued-run.edit: replace the text of a queued run's message before it starts. */
export function decideQueuedRunEdit(state: OrchestrationState, command: QueuedRunEditCommand, ctx: DecideContext): Decision {
  const found = queuedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const item = messageItem(found.changes, found.run);
  if (item === undefined) return reject("run_not_queued", `run ${found.run.id} has no message to edit`);
  if (item.text === command.data.text) return reject("message_unchanged", "the queued message already has that text");
  found.changes.updateItem(item, { text: command.data.text });
  return found.changes.done();
}

/** queued-message.promote-to-steer: move a queued message into the running turn as steering input. */
export function decideQueuedMessagePromoteToSteer(state: OrchestrationState, command: QueuedMessagePromoteToSteerCommand, ctx: DecideContext): Decision {
  const found = queuedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const { changes, run } = found;
  const active = activeRun(changes, run.threadId);
  if (!canSteer(active, active === null ? null : turnFacts(ctx, active))) {
    return reject("thread_not_sendable", `thread ${run.threadId} has no steerable running turn`);
  }
  const item = messageItem(changes, run);
  if (item === undefined) return reject("run_not_queued", `run ${run.id} has no message to promote`);
  changes.updateRun(run, { status: "cancelled", queueRank: null, held: false, endReason: "promoted_to_steer", endedAt: ctx.now });
  changes.updateItem(item, { runId: active.id });
  changes.effect(EffectKind.steerTurn, run.threadId, { threadId: run.threadId, runId: active.id, messageId: item.messageId, text: item.text });
  return changes.done();
}
