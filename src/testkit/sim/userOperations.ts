import { ownerCaller } from "../../app/caller.js";
import { dispatchCommand } from "../../app/commands.js";
import { taskCancel, taskStatus } from "../../app/delegation/tasks.js";
import { raiseBudget } from "../../app/budgets/raise.js";
import { respondToPendingRequest } from "../../app/requests/pendingRequests.js";
import { launchThread } from "../../app/threads/creation.js";
import { waitForThread } from "../../app/threads/threadWait.js";
import { interruptThread, sendToThread, updateThread } from "../../app/threads/writes.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type OperationWorld, type Outcome, describeOutcome, drawBudget, storm, unobservedWait } from "./operations.js";
import { doubled, pausedOnItsPool, pausingWorkflows } from "./workflowOperations.js";

/** The simulation's environment id: every owner call and agent credential names it. */
export const SIM_ENVIRONMENT = "env:sim";
const OWNER = ownerCaller(SIM_ENVIRONMENT);

/**
 * What simulated users do, through the same app functions the MCP and HTTP
 * transports call, as the owner. Each entry is one operation with a weight
 * (0 when it has nothing to act on); adding an operation is one entry.
 * Scheduled fires exist but are not driven yet; they would join this table
 * as one entry. Agents start workflows (agentOperations.ts).
 */
export interface UserOperation {
  weight(world: OperationWorld): number;
  run(world: OperationWorld): Promise<string>;
}

const MAX_ROOTS = 4;

function liveThreads(world: OperationWorld) {
  return [...(world.state()?.threads.values() ?? [])].filter((thread) => thread.deletedAt === null);
}

function roots(world: OperationWorld) {
  return liveThreads(world).filter((thread) => thread.lineage.relation === "root");
}

function pendingRequests(world: OperationWorld, kind: "question" | "approval") {
  return [...(world.state()?.runtimeRequests.values() ?? [])].filter((r) => r.status === "pending" && (r.kind === "user_input") === (kind === "question"));
}

const SEND_MODES = ["auto", "queue", "steer", "restart"] as const;

export const USER_OPERATIONS = {
  /** t3_thread_launch with a first message on one of the instances, a third of the time with a budget for its tree. */
  launch: {
    weight: (world) => (roots(world).length === 0 ? 100 : roots(world).length < MAX_ROOTS ? 6 : 0),
    async run(world) {
      const n = world.next();
      const budget = world.rng.chance(0.35) ? drawBudget(world, "root") : undefined;
      const outcome = await world.invoke("user.launch", (app) =>
        launchThread(app, OWNER, {
          message: `user prompt ${n}`,
          title: `sim root ${n}`,
          target: { providerInstanceId: world.rng.pick(world.instances) },
          ...(world.rng.chance(0.3) ? { runtimeMode: world.rng.pick(["approval-required", "auto-accept-edits"] as const) } : {}),
          ...(budget === undefined ? {} : { budget }),
        }),
      );
      return describeOutcome(outcome);
    },
  },
  /** t3_thread_update set_budget on a root (thread.budget.set): a new budget starts over, with its tree's spend so far counted; sometimes cleared. */
  setBudget: {
    weight: (world) => (roots(world).length > 0 ? 5 : 0),
    async run(world) {
      const root = world.rng.pick(roots(world));
      const budget = world.rng.chance(0.15) ? null : drawBudget(world, "root");
      return describeOutcome(await world.invoke("user.setBudget", (app) => updateThread(app, OWNER, { threadId: root.id, action: "set_budget", budget })));
    },
  },
  /** t3_thread_send in every mode, to roots and children alike, sometimes with a clientRequestId and a retry storm. */
  send: {
    weight: (world) => (liveThreads(world).length > 0 ? 25 : 0),
    async run(world) {
      const thread = world.rng.pick(liveThreads(world));
      const mode = world.rng.pick(SEND_MODES);
      const n = world.next();
      const clientRequestId = world.rng.chance(0.3) ? `send-${n}` : undefined;
      const outcomes = await storm(world, 3, () =>
        world.invoke("user.send", (app) =>
          sendToThread(app, OWNER, { threadId: thread.id, message: `user message ${n}`, mode, ...(clientRequestId === undefined ? {} : { clientRequestId }) }),
        ),
      );
      return outcomes.map(describeOutcome).join(",");
    },
  },
  /** t3_thread_interrupt on a thread with work going. */
  interrupt: {
    weight: (world) => (activeThreads(world).length > 0 ? 10 : 0),
    async run(world) {
      const thread = world.rng.pick(activeThreads(world));
      return describeOutcome(await world.invoke("user.interrupt", (app) => interruptThread(app, OWNER, { threadId: thread })));
    },
  },
  /** t3_pending_request_respond: answer or dismiss a question. */
  answerQuestion: {
    weight: (world) => (pendingRequests(world, "question").length > 0 ? 12 : 0),
    async run(world) {
      const request = world.rng.pick(pendingRequests(world, "question"));
      const dismiss = world.rng.chance(0.25);
      return describeOutcome(
        await world.invoke("user.answerQuestion", (app) =>
          respondToPendingRequest(app, OWNER, { threadId: request.threadId, requestId: request.id, ...(dismiss ? { dismiss: true } : { answers: { q1: "right" } }) }),
        ),
      );
    },
  },
  /** runtime-request.respond on an approval (orchestration.dispatchCommand, as the UI does). */
  answerApproval: {
    weight: (world) => (pendingRequests(world, "approval").length > 0 ? 12 : 0),
    async run(world) {
      const request = world.rng.pick(pendingRequests(world, "approval"));
      const decision = world.rng.pick(["accept", "decline", "accept_for_session"] as const);
      const commandId = `cmd:sim:respond:${world.next()}`;
      const outcome: Outcome<unknown> = await world.invoke("user.answerApproval", (app) =>
        dispatchCommand(app, OWNER, { type: "runtime-request.respond", commandId, data: { threadId: request.threadId, requestId: request.id, response: { decision } } }),
      );
      return describeOutcome(outcome);
    },
  },
  /** task_cancel as the owner. */
  cancelTask: {
    weight: (world) => (unfinishedTasks(world).length > 0 ? 5 : 0),
    async run(world) {
      const task = world.rng.pick(unfinishedTasks(world));
      return describeOutcome(await world.invoke("user.cancelTask", (app) => taskCancel(app, OWNER, { taskId: task.taskId })));
    },
  },
  /** task_status as the owner: reads, never acknowledges. */
  readTask: {
    weight: (world) => ((world.state()?.tasks.size ?? 0) > 0 ? 4 : 0),
    async run(world) {
      const task = world.rng.pick([...world.state()!.tasks.values()]);
      return describeOutcome(await world.invoke("user.readTask", (app) => taskStatus(app, OWNER, { taskId: task.taskId })));
    },
  },
  /**
   * t3_budget_raise as the owner on a root or a running workflow whose budget
   * pauses: every limit doubled, so a paused tree, or a workflow's waiting
   * agent() calls, go on. A workflow paused on its own pool is raised sooner.
   */
  raiseBudget: {
    weight: (world) => raisable(world).reduce((sum, holder) => sum + holder.weight, 0),
    async run(world) {
      const { weight: _weight, limits, ...named } = world.rng.weighted(raisable(world))!;
      return describeOutcome(await world.invoke("user.raiseBudget", (app) => raiseBudget(app, OWNER, { ...named, limits: doubled(limits) })));
    },
  },
  /** t3_thread_wait with a timeout. */
  waitForThread: {
    weight: (world) => (liveThreads(world).length > 0 ? 5 : 0),
    async run(world) {
      const thread = world.rng.pick(liveThreads(world));
      const timeoutMs = world.rng.int(0, 30_000);
      return describeOutcome(await world.invoke("user.waitForThread", (app) => waitForThread(app, { threadId: thread.id, timeoutMs }, unobservedWait())));
    },
  },
} as const satisfies Record<string, UserOperation>;

export type UserOperationName = keyof typeof USER_OPERATIONS;
export const USER_OPERATION_NAMES = Object.keys(USER_OPERATIONS) as UserOperationName[];

function activeThreads(world: OperationWorld): string[] {
  const state = world.state();
  if (state === null) return [];
  const ids = new Set<string>();
  for (const run of state.runs.values()) if (run.status !== "queued" && !isTerminalRunStatus(run.status)) ids.add(run.threadId);
  return [...ids];
}

/** What raiseBudget may raise, by weight: pausing roots, and pausing workflows (more when one waits on its spent pool). */
function raisable(world: OperationWorld) {
  return [
    ...pausingRoots(world).map((root) => ({ weight: 4, threadId: root.id, limits: root.budget!.limits })),
    ...pausingWorkflows(world).map((workflow) => ({ weight: pausedOnItsPool(world, workflow) ? 12 : 4, workflowId: workflow.workflowId, limits: workflow.budget! })),
  ];
}

function pausingRoots(world: OperationWorld) {
  return roots(world).filter((thread) => thread.budget?.limits.onExceeded === "pause");
}

function unfinishedTasks(world: OperationWorld) {
  return [...(world.state()?.tasks.values() ?? [])].filter((task) => task.resultContextTransferId === null);
}
