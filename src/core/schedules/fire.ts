import type { ScheduledTaskFireCommand } from "../../contracts/commands/scheduleCommands.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { FireOutcome, ScheduledFire, ScheduledTask } from "../../contracts/entities/scheduledTasks.js";
import { scheduledTaskEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, type ProviderFacts, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { activeRun, enqueue, newRun, queuedRuns, startRun, threadProvider } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { fireText } from "./fireText.js";
import { newThreadRecord } from "../thread/fresh.js";

/**
 * scheduled-task.fire: one fire of a task, through the same path whatever
 * caused it (a due time, catch-up after downtime, run now, a webhook).
 *
 * - A timed fire must name the task's current next due time and the task
 *   must be enabled; otherwise it is stale (another node or an earlier try
 *   fired it, or the task changed) and is refused, writing nothing.
 * - overlap "skip": while the previous fire's run is not terminal, the fire is
 *   recorded as skipped, with no run. "queue": it runs after that work.
 * - A bound task posts a scheduled_task run into its thread, queued behind
 *   active work; an unbound one launches a fresh thread in the project.
 * - Work that cannot be created (the bound thread is gone, the provider is
 *   unavailable) is a skipped fire with the reason, so the schedule still
 *   advances.
 */
export function decideScheduledTaskFire(state: OrchestrationState, command: ScheduledTaskFireCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const task = state.scheduledTasks.get(data.scheduledTaskId);
  if (task === undefined) return reject(RejectionCode.scheduledTaskNotFound, `no scheduled task ${data.scheduledTaskId}`);
  const timed = data.cause === "timer" || data.cause === "catch_up";
  if (timed || data.cause === "webhook") {
    if (!task.enabled) return reject(RejectionCode.scheduledTaskPaused, `scheduled task ${task.id} is paused`);
  }
  if (timed && task.nextFireAt !== data.dueAt) {
    return reject(RejectionCode.scheduledFireStale, `scheduled task ${task.id} is next due at ${task.nextFireAt ?? "no time"}, not ${data.dueAt}`);
  }
  if ((data.cause === "webhook") !== (task.trigger.type === "webhook") && data.cause !== "manual") {
    return reject(RejectionCode.scheduledTaskInvalid, `a ${data.cause} fire does not match the task's ${task.trigger.type} trigger`);
  }
  const changes = new Changes(state, ctx);
  const record = (outcome: FireOutcome, reason: string | null, runId: string | null, threadId: string | null): Decision => {
    const fire: ScheduledFire = { dueAt: data.dueAt, firedAt: ctx.now, cause: data.cause, instants: data.instants, outcome, reason, runId, threadId };
    const next: ScheduledTask = { ...task, nextFireAt: timed ? data.nextFireAt : task.nextFireAt, lastFire: fire, fireCount: task.fireCount + 1, updatedAt: ctx.now };
    changes.events.push(scheduledTaskEvent("scheduled-task.updated", next, fire));
    return changes.done();
  };

  const previous = task.lastFire?.runId == null ? undefined : changes.run(task.lastFire.runId);
  if (previous !== undefined && !isTerminalRunStatus(previous.status) && task.overlap === "skip") {
    return record("skipped", `the previous fire's run ${previous.id} is still ${previous.status} (overlap: skip)`, null, null);
  }
  const text = fireText(task, data);
  if (task.boundThreadId !== null) {
    const thread = state.threads.get(task.boundThreadId);
    if (thread === undefined || thread.deletedAt !== null || thread.archivedAt !== null) {
      return record("skipped", `the bound thread ${task.boundThreadId} is ${thread === undefined ? "gone" : thread.deletedAt !== null ? "deleted" : "archived"}`, null, null);
    }
    const providerId = threadProvider(thread);
    const facts = providerId === null ? null : ctx.providers(providerId);
    if (facts === null) return record("skipped", `the bound thread's provider instance ${providerId ?? "(none)"} is not available`, null, null);
    const idle = activeRun(changes, thread.id) === null && !queuedRuns(changes, thread.id).some((run) => !run.held);
    const run = addRun(changes, thread, facts, data, text);
    if (idle) startRun(changes, run);
    else enqueue(changes, run, "back");
    return record(idle ? "started" : "queued", null, run.id, thread.id);
  }
  const facts = ctx.providers(task.providerInstanceId);
  if (facts === null) return record("skipped", `provider instance ${task.providerInstanceId} is not available`, null, null);
  if (state.threads.has(data.threadId)) return reject(RejectionCode.threadAlreadyExists, `thread ${data.threadId} already exists`);
  const thread = scheduledThread(task, data.threadId, ctx);
  changes.events.push(threadEvent("thread.created", thread));
  const run = addRun(changes, thread, facts, data, text);
  startRun(changes, run);
  return record("started", null, run.id, thread.id);
}

function addRun(changes: Changes, thread: AppThread, facts: ProviderFacts, data: ScheduledTaskFireCommand["data"], text: string) {
  const run = newRun(changes, thread, facts, { runId: data.runId, kind: "scheduled_task", messageId: data.messageId });
  changes.addItem(thread.id, run.id, { type: "user_message", messageId: data.messageId, text, createdBy: "system", creationSource: "scheduler" });
  return run;
}

/** A fresh top-level thread for one fire of an unbound task. */
function scheduledThread(task: ScheduledTask, threadId: string, ctx: DecideContext): AppThread {
  return newThreadRecord(ctx.now, {
    id: threadId,
    projectId: task.projectId,
    title: task.title,
    providerInstanceId: task.providerInstanceId,
    modelSelection: { providerInstanceId: task.providerInstanceId, model: task.model },
    runtimeMode: task.runtimeMode,
    interactionMode: task.interactionMode,
    worktreePath: null,
    branch: null,
    lineage: { rootThreadId: threadId, parentThreadId: null, parentNodeId: null, relation: "root" },
    createdBy: "system",
    creationSource: "scheduler",
    autoSettle: true,
  });
}
