import type { Command } from "../../contracts/commands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { OrchestrationState } from "../../core/state.js";
import { decide } from "../../core/decider.js";
import type { Decide } from "../../engine/dispatcher.js";
import type { Orchestrator } from "../../engine/orchestrator.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { reject } from "../../core/decision.js";

/**
 * Known bugs the simulator must be able to find: each is planted through a
 * seam of the composition (a mutant decider, a filter between the reactor
 * and the engine), never in shipped code. The
 * planted-bug test and bench/simBench.ts check that some seed finds each.
 */
export const PlantedBug = {
  /**
   * delegate_task waits are not recorded and a wait's end acknowledges the
   * result it took even after a notice delivered it (the check-then-act of
   * an app-level hold): the result reaches the parent twice.
   */
  waitAndNotice: "wait-and-notice",
  /**
   * Holds as each node's memory would keep them: a reactor sees only the
   * waits its own node serves, and core delivers a notice whatever holds the
   * task. A second node's reactor notifies the parent of a result a wait on
   * the first is handing over (one node trips it only when its reactor acts
   * on a result just before the hold it raced commits).
   */
  holdsPerNode: "holds-per-node",
  /** After a restart, neither boot reconciliation's run-lost nor the reactor's catch-up finalizes a lost child's task. */
  skipFinalizeAfterRestart: "skip-finalize-after-restart",
  /** A retried delegate_task that races the first one creates a second child instead of answering with the first. */
  retrySecondChild: "retry-second-child",
  /**
   * The check-then-record race budgets had: a turn counts against its budgets
   * only once its provider started it, not from the decision that took it off
   * the queue, so delegations and messages decided before the providers
   * answer all pass a `turns` limit.
   */
  turnReservedLate: "turn-reserved-late",
  /**
   * The check-then-record race parallel agent() calls had: a workflow's
   * agent() task counts against the workflow's pool only once its agent has
   * started, not from the decision that created it, so calls decided
   * together, before the providers answer, all pass a `spawns` limit.
   */
  workflowSpawnsLate: "workflow-spawns-late",
} as const;
export type PlantedBug = (typeof PlantedBug)[keyof typeof PlantedBug];

export const PLANTED_BUGS: readonly PlantedBug[] = Object.values(PlantedBug);

export function isPlantedBug(name: string): name is PlantedBug {
  return (PLANTED_BUGS as readonly string[]).includes(name);
}

/** How a node is wired differently when bugs are planted. */
export interface BugWiring {
  readonly decide: Decide;
  /** The orchestrator the delegation reactor of node `holder` talks to. */
  readonly reactorEngine: (orchestrator: Orchestrator, holder: string) => Orchestrator;
}

/** A state whose tasks show only the holds `holder` serves: what a reactor with per-node memory would know. */
function withOwnHoldsOnly(orchestrator: Orchestrator, holder: string): Orchestrator {
  const own = (task: DelegatedTask | undefined) => (task?.heldBy === undefined ? task : { ...task, heldBy: task.heldBy.filter((hold) => hold.holder === holder) });
  return new Proxy(orchestrator, {
    get(target, property, receiver) {
      if (property !== "state") return Reflect.get(target, property, receiver) as unknown;
      const state = target.state;
      const tasks = { get: (taskId: string) => own(state.tasks.get(taskId)), values: () => [...state.tasks.values()].map(own).values() };
      return new Proxy(state, { get: (inner, key) => (key === "tasks" ? tasks : (Reflect.get(inner, key) as unknown)) });
    },
  });
}

function withoutFinalize(orchestrator: Orchestrator): Orchestrator {
  return new Proxy(orchestrator, {
    get(target, property, receiver) {
      if (property === "dispatch") {
        return (command: Command) =>
          command.type === "delegated-task.finalize"
            ? Promise.resolve({ status: "accepted", commandId: command.commandId, commandType: command.type, sequence: 0, eventCount: 0, acceptedAt: "" })
            : target.dispatch(command);
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/**
 * Decide with every run of other threads that is off the queue but not yet
 * started by its provider shown as still queued, so the budget checks do not
 * count its turn. Only the commands that admit new turns, and only other
 * threads' runs, so nothing else they decide changes.
 */
function withLateReservations<T>(state: OrchestrationState, ownThreads: readonly string[], decideIt: () => T): T {
  const hidden: Run[] = [];
  for (const run of state.runs.values()) {
    if (run.status !== "starting" || run.startedAt !== null || ownThreads.includes(run.threadId)) continue;
    hidden.push(run);
    (run as { status: Run["status"] }).status = "queued";
  }
  try {
    return decideIt();
  } finally {
    for (const run of hidden) (run as { status: Run["status"] }).status = "starting";
  }
}

/**
 * Decide an agent() task's request with the workflow's other calls whose
 * tasks exist but whose agent has not started yet left out of its journal,
 * so the pool's check does not count their spawns (nor their turns). Only
 * that workflow, only while deciding, so nothing else the decision reads
 * changes.
 */
function withLateWorkflowSpawns<T>(state: OrchestrationState, workflowId: string, stepId: string, decideIt: () => T): T {
  const workflow = state.workflows.get(workflowId);
  if (workflow === undefined) return decideIt();
  const started = (taskId: string | null) => {
    const task = taskId === null ? undefined : state.tasks.get(taskId);
    const run = task?.childRunId == null ? undefined : state.runs.get(task.childRunId);
    return task === undefined || (run?.startedAt ?? null) !== null;
  };
  state.workflows.set(workflowId, { ...workflow, steps: workflow.steps.filter((step) => step.stepId === stepId || started(step.taskId)) });
  try {
    return decideIt();
  } finally {
    state.workflows.set(workflowId, workflow);
  }
}

/** core's decide with the mutations of the planted bugs. */
function mutantDecide(bugs: ReadonlySet<PlantedBug>): Decide {
  return (state, command, ctx) => {
    if (bugs.has(PlantedBug.skipFinalizeAfterRestart) && command.type === "provider-runtime.run-lost" && command.data.reason === "server_restarted") {
      // Hide the child's task while deciding, so the lost run settles nothing.
      const taskId = state.taskByChildThread.get(command.data.threadId);
      if (taskId !== undefined) {
        state.taskByChildThread.delete(command.data.threadId);
        try {
          return decide(state, command, ctx);
        } finally {
          state.taskByChildThread.set(command.data.threadId, taskId);
        }
      }
    }
    if (bugs.has(PlantedBug.retrySecondChild) && command.type === "delegated_task.request" && state.tasks.has(command.data.taskId)) {
      const again = (id: string) => `${id}:again`;
      const data = command.data;
      return decide(state, { ...command, data: { ...data, taskId: again(data.taskId), childThreadId: again(data.childThreadId), childRunId: again(data.childRunId), childMessageId: again(data.childMessageId) } }, ctx);
    }
    if (bugs.has(PlantedBug.turnReservedLate) && (command.type === "delegated_task.request" || command.type === "message.dispatch")) {
      const own = command.type === "message.dispatch" ? [command.data.threadId] : [command.data.parentThreadId, command.data.childThreadId];
      return withLateReservations(state, own, () => decide(state, command, ctx));
    }
    if (bugs.has(PlantedBug.workflowSpawnsLate) && command.type === "delegated_task.request" && command.data.workflowStep !== undefined) {
      const { workflowId, stepId } = command.data.workflowStep;
      return withLateWorkflowSpawns(state, workflowId, stepId, () => decide(state, command, ctx));
    }
    if (bugs.has(PlantedBug.waitAndNotice) && command.type === "delegated-task.wait-hold") return reject("wait_not_found", "planted: waits are not recorded");
    if (bugs.has(PlantedBug.waitAndNotice) && command.type === "delegated-task.wait-release") {
      const delivered = command.data.took.find((taskId) => state.tasks.get(taskId)?.completionDelivery === "delivered");
      if (delivered !== undefined) return decide(state, { type: "delegated_task.completion-delivery.acknowledge", commandId: command.commandId, data: { taskId: delivered } }, ctx);
    }
    if (bugs.has(PlantedBug.holdsPerNode) && command.type === "delegated-task.deliver-notice") {
      // Decide as though no wait held the task.
      const task = state.tasks.get(command.data.taskId);
      if (task?.heldBy !== undefined && task.heldBy.length > 0) {
        const holds = task.heldBy;
        (task as { heldBy?: DelegatedTask["heldBy"] }).heldBy = [];
        try {
          return decide(state, command, ctx);
        } finally {
          (task as { heldBy?: DelegatedTask["heldBy"] }).heldBy = holds;
        }
      }
    }
    return decide(state, command, ctx);
  };
}

export function bugWiring(bugs: readonly PlantedBug[]): BugWiring {
  const planted = new Set(bugs);
  return {
    decide: planted.size === 0 ? decide : mutantDecide(planted),
    reactorEngine: (orchestrator, holder) => {
      const engine = planted.has(PlantedBug.skipFinalizeAfterRestart) ? withoutFinalize(orchestrator) : orchestrator;
      return planted.has(PlantedBug.holdsPerNode) ? withOwnHoldsOnly(engine, holder) : engine;
    },
  };
}
