import { randomUUID } from "node:crypto";
import type { ScheduledTask, Trigger } from "../../contracts/entities/scheduledTasks.js";
import type {
  DeleteScheduledTaskOutput,
  ListScheduledTasksInput,
  ListScheduledTasksOutput,
  RunScheduledTaskNowOutput,
  ScheduleTaskInput,
  ScheduledTaskIdOnlyInput,
  ScheduledTaskOutput,
  TriggerInput,
  UpdateScheduledTaskInput,
} from "../../contracts/tools/scheduleTools.js";
import type { ToolName } from "../../contracts/tools/toolContracts.js";
import { joinId } from "../../core/ids.js";
import { type ActingCaller, type Caller, ceilingOf, resolveCaller } from "../caller.js";
import { type AppContext, execute } from "../context.js";
import { fail } from "../errors.js";
import { checkClaim, claimField, claimRequest } from "../idempotency.js";
import { resolveModes, resolveTarget } from "../policy.js";
import { titleFromText } from "../threads/views.js";
import { nextDueAfter } from "./dueTimes.js";
import { fireScheduledTask } from "./fire.js";
import { scheduledTaskView } from "./views.js";
import { newWebhookToken, tokenHash } from "./webhookKeys.js";

function taskOrFail(ctx: AppContext, scheduledTaskId: string): ScheduledTask {
  return ctx.orchestrator.state.scheduledTasks.get(scheduledTaskId) ?? fail("invalid_request", `no scheduled task ${scheduledTaskId}; list_scheduled_tasks shows the existing ones`);
}

function projectFor(ctx: AppContext, acting: ActingCaller, projectId: string | undefined): string {
  const id = projectId ?? acting.thread?.projectId ?? ctx.projects[0]?.id ?? fail("invalid_request", "no project is configured");
  if (!ctx.projects.some((p) => p.id === id)) fail("invalid_request", `unknown project ${id}; known: ${ctx.projects.map((p) => p.id).join(", ")}`);
  return id;
}

/**
 * bindToCurrentThread (spec 000): default true only when the caller has a
 * thread in the task's project; an explicit true without one is refused.
 */
function boundThread(acting: ActingCaller, projectId: string, bind: boolean | undefined): string | null {
  const inProject = acting.thread !== null && acting.thread.projectId === projectId ? acting.thread.id : null;
  if (bind === true && inProject === null) {
    fail("invalid_request", `bindToCurrentThread needs a calling thread in project ${projectId}; ${acting.thread === null ? "you have no thread" : `your thread is in project ${acting.thread.projectId}`}`);
  }
  return (bind ?? inProject !== null) ? inProject : null;
}

/** The trigger as the log keeps it; a webhook's token and secret go to the key file (`keys`, written only once the input is valid). */
function triggerRecord(ctx: AppContext, input: TriggerInput, previousToken: string | null): { trigger: Trigger; keys: { token: string; secret: string | null } | null } {
  switch (input.type) {
    case "interval":
      if (input.everyMs < ctx.schedules.minIntervalMs) fail("invalid_request", `trigger.everyMs must be at least ${ctx.schedules.minIntervalMs} ms (scheduler.minIntervalMs)`);
      return { trigger: { type: "interval", everyMs: input.everyMs }, keys: null };
    case "daily":
      return { trigger: { type: "daily", at: input.at, weekdays: input.weekdays === undefined ? null : [...new Set(input.weekdays)].sort() }, keys: null };
    case "webhook": {
      const token = previousToken ?? newWebhookToken();
      const trigger: Trigger = { type: "webhook", signed: input.signature !== undefined, filters: input.filters ?? [], dedupeKey: input.dedupeKey ?? null, tokenHash: tokenHash(token) };
      return { trigger, keys: { token, secret: input.signature?.secret ?? null } };
    }
    default: {
      const exhaustive: never = input;
      return exhaustive;
    }
  }
}

function firstDue(ctx: AppContext, trigger: Trigger, enabled: boolean): string | null {
  if (!enabled || trigger.type === "webhook") return null;
  return new Date(nextDueAfter(trigger, ctx.clock(), null, ctx.schedules.timeZone)).toISOString();
}

type Settings = Omit<UpdateScheduledTaskInput, "scheduledTaskId">;

async function createTask(ctx: AppContext, acting: ActingCaller, input: ScheduleTaskInput, tool: ToolName): Promise<ScheduledTaskOutput> {
  const claim = claimRequest(ctx, acting.requestScope, tool, input);
  const scheduledTaskId =
    input.clientRequestId === undefined ? joinId("scheduled-task", randomUUID()) : joinId("scheduled-task", "client-request", acting.requestScope, input.clientRequestId);
  const retried = ctx.orchestrator.state.scheduledTasks.get(scheduledTaskId);
  if (retried !== undefined) return scheduledTaskView(ctx, retried);
  const prompt = input.prompt ?? fail("invalid_request", "prompt is required to create a scheduled task");
  const triggerInput = input.trigger ?? fail("invalid_request", "trigger is required to create a scheduled task");
  const projectId = projectFor(ctx, acting, input.projectId);
  const boundThreadId = boundThread(acting, projectId, input.bindToCurrentThread);
  const target = await resolveTarget(ctx.registry, acting, input.target);
  const modes = resolveModes(acting, target.availability, input);
  const { trigger, keys } = triggerRecord(ctx, triggerInput, null);
  const enabled = input.enabled ?? true;
  if (keys !== null) ctx.schedules.keys.put(scheduledTaskId, keys);
  await execute(ctx, {
    type: "scheduled-task.save",
    commandId: joinId("cmd", "scheduled-task.save", scheduledTaskId, "create"),
    ...claimField(claim),
    data: {
      scheduledTaskId,
      mode: "create",
      projectId,
      title: input.title ?? titleFromText(prompt) ?? "Scheduled task",
      prompt,
      trigger,
      boundThreadId,
      enabled,
      overlap: input.overlap ?? "skip",
      providerInstanceId: target.providerInstanceId,
      model: target.model,
      ...modes,
      createdBy: acting.kind === "owner" ? "user" : "agent",
      createdByThreadId: acting.thread?.id ?? null,
      nextFireAt: firstDue(ctx, trigger, enabled),
      ceiling: ceilingOf(acting),
    },
  }).catch((error: unknown) => {
    if (keys !== null && !ctx.orchestrator.state.scheduledTasks.has(scheduledTaskId)) ctx.schedules.keys.remove(scheduledTaskId);
    throw error;
  });
  checkClaim(ctx, claim);
  return scheduledTaskView(ctx, taskOrFail(ctx, scheduledTaskId));
}

async function updateTask(ctx: AppContext, acting: ActingCaller, scheduledTaskId: string, input: Settings): Promise<ScheduledTaskOutput> {
  const task = taskOrFail(ctx, scheduledTaskId);
  const projectId = input.projectId === undefined ? task.projectId : projectFor(ctx, acting, input.projectId);
  let boundThreadId = task.boundThreadId;
  if (input.bindToCurrentThread !== undefined) boundThreadId = boundThread(acting, projectId, input.bindToCurrentThread);
  else if (boundThreadId !== null && projectId !== task.projectId) fail("invalid_request", `the task is bound to a thread of project ${task.projectId}; unbind it (bindToCurrentThread: false) to move it`);
  let providerInstanceId = task.providerInstanceId;
  let model = task.model;
  let modes = { runtimeMode: task.runtimeMode, interactionMode: task.interactionMode };
  if (input.target !== undefined || input.runtimeMode !== undefined || input.interactionMode !== undefined) {
    const target = await resolveTarget(ctx.registry, acting, input.target ?? { providerInstanceId: task.providerInstanceId });
    providerInstanceId = target.providerInstanceId;
    model = input.target === undefined ? task.model : target.model;
    modes = { runtimeMode: input.runtimeMode ?? task.runtimeMode, interactionMode: input.interactionMode ?? task.interactionMode };
    const offered = target.availability.capabilities?.runtimeModes;
    if (offered !== undefined && !offered.includes(modes.runtimeMode)) fail("invalid_request", `${providerInstanceId} does not offer runtime mode ${modes.runtimeMode}`);
  }
  const previousToken = task.trigger.type === "webhook" ? (ctx.schedules.keys.get(task.id)?.token ?? null) : null;
  const { trigger, keys } = input.trigger === undefined ? { trigger: task.trigger, keys: null } : triggerRecord(ctx, input.trigger, previousToken);
  const enabled = input.enabled ?? task.enabled;
  const reschedule = input.trigger !== undefined || (enabled && !task.enabled) || (enabled && task.nextFireAt === null);
  const nextFireAt = reschedule ? firstDue(ctx, trigger, enabled) : enabled ? task.nextFireAt : null;
  if (keys !== null) ctx.schedules.keys.put(task.id, keys);
  await execute(ctx, {
    type: "scheduled-task.save",
    commandId: joinId("cmd", "scheduled-task.save", task.id, randomUUID()),
    data: {
      scheduledTaskId: task.id,
      mode: "update",
      projectId,
      title: input.title ?? task.title,
      prompt: input.prompt ?? task.prompt,
      trigger,
      boundThreadId,
      enabled,
      overlap: input.overlap ?? task.overlap,
      providerInstanceId,
      model,
      ...modes,
      createdBy: task.createdBy,
      createdByThreadId: task.createdByThreadId,
      nextFireAt,
      ceiling: ceilingOf(acting),
    },
  });
  if (trigger.type !== "webhook" && task.trigger.type === "webhook") ctx.schedules.keys.remove(task.id);
  return scheduledTaskView(ctx, taskOrFail(ctx, task.id));
}

/**
 * schedule_task: create a task, or with scheduledTaskId update one (then it
 * is update_scheduled_task). Pausing is enabled: false; resuming computes the
 * next due time from now.
 */
export async function scheduleTask(ctx: AppContext, caller: Caller, input: ScheduleTaskInput): Promise<ScheduledTaskOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "schedule_task");
  if (input.scheduledTaskId !== undefined) {
    const { scheduledTaskId, clientRequestId: _key, ...settings } = input;
    return updateTask(ctx, acting, scheduledTaskId, settings);
  }
  return createTask(ctx, acting, input, "schedule_task");
}

/** update_scheduled_task: the fields given replace the task's; the rest stay. */
export async function updateScheduledTask(ctx: AppContext, caller: Caller, input: UpdateScheduledTaskInput): Promise<ScheduledTaskOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "update_scheduled_task");
  const { scheduledTaskId, ...settings } = input;
  return updateTask(ctx, acting, scheduledTaskId, settings);
}

/** list_scheduled_tasks: every task of the environment (or of one project), oldest first. */
export function listScheduledTasks(ctx: AppContext, caller: Caller, input: ListScheduledTasksInput): ListScheduledTasksOutput {
  resolveCaller(ctx.orchestrator.state, caller, "list_scheduled_tasks");
  const tasks = [...ctx.orchestrator.state.scheduledTasks.values()]
    .filter((task) => input.projectId === undefined || task.projectId === input.projectId)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  return { tasks: tasks.map((task) => scheduledTaskView(ctx, task)) };
}

/** delete_scheduled_task: permanent; runs it already started go on. */
export async function deleteScheduledTask(ctx: AppContext, caller: Caller, input: ScheduledTaskIdOnlyInput): Promise<DeleteScheduledTaskOutput> {
  resolveCaller(ctx.orchestrator.state, caller, "delete_scheduled_task");
  const task = taskOrFail(ctx, input.scheduledTaskId);
  await execute(ctx, { type: "scheduled-task.delete", commandId: joinId("cmd", "scheduled-task.delete", task.id), data: { scheduledTaskId: task.id } });
  ctx.schedules.keys.remove(task.id);
  ctx.schedules.deliveries.forgetTask(task.id);
  return { scheduledTaskId: task.id, deleted: true };
}

/** run_scheduled_task_now: one fire, now, through the same path as a timed fire (a paused task too); its schedule does not move. */
export async function runScheduledTaskNow(ctx: AppContext, caller: Caller, input: ScheduledTaskIdOnlyInput): Promise<RunScheduledTaskNowOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "run_scheduled_task_now");
  const task = taskOrFail(ctx, input.scheduledTaskId);
  const { fire } = await fireScheduledTask(ctx, {
    ceiling: ceilingOf(acting),
    scheduledTaskId: task.id,
    cause: "manual",
    dueAt: new Date(ctx.clock()).toISOString(),
    instants: 1,
    nextFireAt: null,
    fireKey: joinId("manual", randomUUID()),
    context: null,
  });
  if (fire === null) fail("orchestration_error", `scheduled task ${task.id} did not record the fire`);
  return { scheduledTaskId: task.id, outcome: fire.outcome, reason: fire.reason, runId: fire.runId, threadId: fire.threadId, task: scheduledTaskView(ctx, taskOrFail(ctx, task.id)) };
}
