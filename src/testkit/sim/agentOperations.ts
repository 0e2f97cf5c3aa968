import { type TaskDelegation, delegateTask, waitForTask } from "../../app/delegation/delegate.js";
import { taskCancel, taskStatus } from "../../app/delegation/tasks.js";
import { respondToPendingRequest } from "../../app/requests/pendingRequests.js";
import { sendToThread } from "../../app/threads/writes.js";
import { waitForThread } from "../../app/threads/threadWait.js";
import { type OperationWorld, describeOutcome, drawBudget, storm, unobservedWait } from "./operations.js";
import type { AgentContext, TurnEnd, TurnStep } from "./simDriver.js";
import { startDrawnWorkflow } from "./workflowOperations.js";

/**
 * What simulated agents do during their turns: each entry is one kind of app
 * call an agent makes through its provider session's credential (an
 * AgentCaller). Adding an operation is one entry here; the brain below picks
 * entries by weight.
 */
export interface AgentOperation {
  readonly weight: number;
  run(world: OperationWorld, agent: AgentContext): Promise<string>;
}

function tasksOf(world: OperationWorld, threadId: string) {
  return [...(world.state()?.tasks.values() ?? [])].filter((task) => task.parentThreadId === threadId);
}

function pickTask(world: OperationWorld, agent: AgentContext) {
  const tasks = tasksOf(world, agent.threadId);
  return tasks.length === 0 ? null : world.rng.pick(tasks);
}

const SEND_MODES = ["auto", "queue", "steer", "restart"] as const;

export const AGENT_OPERATIONS = {
  /** delegate_task, async or wait, with or without a clientRequestId, sometimes a retry of an earlier one, sometimes a storm of copies. */
  delegate: {
    weight: 40,
    async run(world, agent) {
      const used = world.clientRequestIds(agent.threadId);
      const retry = used.length > 0 && world.rng.chance(0.3);
      const clientRequestId = retry ? world.rng.pick(used) : world.rng.chance(0.6) ? `req-${world.next()}` : undefined;
      if (clientRequestId !== undefined && !retry) used.push(clientRequestId);
      const input: TaskDelegation = {
        task: `sim task ${world.next()}`,
        mode: world.rng.chance(0.3) ? "wait" : "async",
        ...(clientRequestId === undefined ? {} : { clientRequestId }),
        ...(world.rng.chance(0.7) ? { target: { providerInstanceId: world.rng.pick(world.instances) } } : {}),
        ...(world.rng.chance(0.2) ? { runtimeMode: world.rng.pick(["approval-required", "auto-accept-edits", "full-access"] as const) } : {}),
        timeoutMs: world.rng.int(0, 40_000),
      };
      const outcomes = await storm(world, 4, () => world.invoke("agent.delegate", (app) => delegateTask(app, agent.caller, input, unobservedWait())));
      for (const outcome of outcomes) if (outcome.ok) world.recordDelegation(agent.threadId, clientRequestId, outcome.value.taskId);
      return outcomes.map(describeOutcome).join(",");
    },
  },
  /**
   * 2 to 4 different delegate_task calls at once (an agent fanning work out),
   * some asking for a narrower budget of their own: under a budgeted root,
   * siblings doing this at the same time contend for one pool.
   */
  fanOut: {
    weight: 14,
    async run(world, agent) {
      const inputs: TaskDelegation[] = Array.from({ length: world.rng.int(2, 4) }, () => ({
        task: `sim fan-out task ${world.next()}`,
        mode: "async",
        clientRequestId: `fan-${world.next()}`,
        target: { providerInstanceId: world.rng.pick(world.instances) },
        ...(world.rng.chance(0.25) ? { budget: drawBudget(world, "task") } : {}),
      }));
      const outcomes = await Promise.all(inputs.map((input) => world.invoke("agent.fanOut", (app) => delegateTask(app, agent.caller, input, unobservedWait()))));
      outcomes.forEach((outcome, index) => {
        if (outcome.ok) world.recordDelegation(agent.threadId, inputs[index]!.clientRequestId, outcome.value.taskId);
      });
      return outcomes.map(describeOutcome).join(",");
    },
  },
  /** t3_thread_send (queue) to every child at once: new turns under one pool, decided together. */
  sendToChildren: {
    weight: 6,
    async run(world, agent) {
      const children = tasksOf(world, agent.threadId).slice(0, 4);
      if (children.length === 0) return "no task";
      const outcomes = await Promise.all(
        children.map((task) => world.invoke("agent.sendToChildren", (app) => sendToThread(app, agent.caller, { threadId: task.childThreadId, message: `agent round ${world.next()}`, mode: "queue" }))),
      );
      return outcomes.map(describeOutcome).join(",");
    },
  },
  /** task_status on one of its tasks (reading an available result acknowledges it). */
  taskStatus: {
    weight: 15,
    async run(world, agent) {
      const task = pickTask(world, agent);
      if (task === null) return "no task";
      return describeOutcome(await world.invoke("agent.taskStatus", (app) => taskStatus(app, agent.caller, { taskId: task.taskId })));
    },
  },
  /** delegate_task mode wait on a task it already has (a retried wait after a timeout). */
  waitForTask: {
    weight: 8,
    async run(world, agent) {
      const task = pickTask(world, agent);
      if (task === null) return "no task";
      const timeoutMs = world.rng.int(0, 35_000);
      return describeOutcome(await world.invoke("agent.waitForTask", (app) => waitForTask(app, task.taskId, timeoutMs, unobservedWait())));
    },
  },
  /** task_cancel on one of its tasks. */
  taskCancel: {
    weight: 8,
    async run(world, agent) {
      const task = pickTask(world, agent);
      if (task === null) return "no task";
      return describeOutcome(await world.invoke("agent.taskCancel", (app) => taskCancel(app, agent.caller, { taskId: task.taskId, reason: "sim cancel" })));
    },
  },
  /** t3_thread_send to a child thread in any mode. */
  sendToChild: {
    weight: 8,
    async run(world, agent) {
      const task = pickTask(world, agent);
      if (task === null) return "no task";
      const mode = world.rng.pick(SEND_MODES);
      return describeOutcome(
        await world.invoke("agent.sendToChild", (app) => sendToThread(app, agent.caller, { threadId: task.childThreadId, message: `agent follow-up ${world.next()}`, mode })),
      );
    },
  },
  /** t3_pending_request_respond on a child's open question. */
  answerChild: {
    weight: 8,
    async run(world, agent) {
      const children = new Set(tasksOf(world, agent.threadId).map((task) => task.childThreadId));
      const questions = [...(world.state()?.runtimeRequests.values() ?? [])].filter((r) => children.has(r.threadId) && r.kind === "user_input" && r.status === "pending");
      if (questions.length === 0) return "no question";
      const request = world.rng.pick(questions);
      const dismiss = world.rng.chance(0.2);
      return describeOutcome(
        await world.invoke("agent.answerChild", (app) =>
          respondToPendingRequest(app, agent.caller, { threadId: request.threadId, requestId: request.id, ...(dismiss ? { dismiss: true } : { answer: "left" }) }),
        ),
      );
    },
  },
  /** t3_thread_wait on a child thread's latest run. */
  waitForChild: {
    weight: 5,
    async run(world, agent) {
      const task = pickTask(world, agent);
      if (task === null) return "no task";
      const timeoutMs = world.rng.int(0, 30_000);
      return describeOutcome(await world.invoke("agent.waitForChild", (app) => waitForThread(app, { threadId: task.childThreadId, timeoutMs }, unobservedWait())));
    },
  },
  /** t3_workflow_start with a script drawn from the seed (workflowOperations.ts): parallel and sequential agent() calls, often under a budget of its own. */
  startWorkflow: {
    weight: 5,
    run: startDrawnWorkflow,
  },
} as const satisfies Record<string, AgentOperation>;

export type AgentOperationName = keyof typeof AGENT_OPERATIONS;
const AGENT_OPERATION_NAMES = Object.keys(AGENT_OPERATIONS) as AgentOperationName[];

export function isAgentOperation(name: string): name is AgentOperationName {
  return Object.hasOwn(AGENT_OPERATIONS, name);
}

/** How a turn may end, by weight; `hang`, `die` and `limited` only when their fault is on. */
export interface TurnEndWeights {
  readonly hang: boolean;
  readonly die: boolean;
  readonly limited: boolean;
}

/**
 * The agent's brain: what a turn does, drawn from the seed when it starts.
 * While the system drains (phase quiet) a turn only answers and completes,
 * so the run converges.
 */
export function planTurn(world: OperationWorld, ends: TurnEndWeights): TurnStep[] {
  const rng = world.rng;
  if (world.phase === "quiet") return [{ kind: "say", delayMs: rng.int(0, 2_000) }, { kind: "end", delayMs: rng.int(0, 2_000), how: "completed" }];
  const steps: TurnStep[] = [];
  const count = rng.int(1, 5);
  for (let i = 0; i < count; i++) {
    const delayMs = rng.int(0, 3_000);
    const kind = rng.weighted([
      { weight: 30, kind: "say" as const },
      { weight: 8, kind: "usage" as const },
      { weight: 7, kind: "ask" as const },
      { weight: 5, kind: "approve" as const },
      { weight: 45, kind: "agent" as const },
    ])!.kind;
    if (kind === "agent") {
      const op = rng.weighted(AGENT_OPERATION_NAMES.map((name) => ({ name, weight: AGENT_OPERATIONS[name].weight })))!.name;
      steps.push({ kind, delayMs, op });
    } else {
      steps.push({ kind, delayMs });
    }
  }
  const how: TurnEnd = rng.weighted([
    { weight: 88, how: "completed" as const },
    { weight: 6, how: "failed" as const },
    { weight: ends.hang ? 3 : 0, how: "hang" as const },
    { weight: ends.die ? 3 : 0, how: "die" as const },
    { weight: ends.limited ? 4 : 0, how: "limited" as const },
  ])!.how;
  steps.push({ kind: "end", delayMs: rng.int(0, 3_000), how });
  return steps;
}
