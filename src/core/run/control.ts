import { EffectKind } from "../../contracts/effects.js";
import type {
  ProviderSessionDetachCommand,
  QueueResumeCommand,
  RunInterruptCommand,
  ThreadStopCommand,
} from "../../contracts/commands/runCommands.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "../thread/guards.js";
import { Changes } from "./changes.js";
import { settleTask } from "../delegation/settle.js";
import { stopTaskTree } from "../delegation/controls.js";
import { stopWorkflowIn } from "../workflows/workflows.js";
import { activeRun, interruptSettlingRun, queuedRuns, requestInterrupt, startNext, stopThreadWork, turnFacts } from "./lifecycle.js";
import { pendingLimitResume } from "./limitWait.js";

/**
 * run.interrupt: stop the selected active run (the newest active one without
 * runId). The run ends when its provider reports the turn interrupted.
 */
export function decideRunInterrupt(state: OrchestrationState, command: RunInterruptCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const run = command.data.runId === undefined ? activeRun(changes, found.thread.id) : changes.run(command.data.runId);
  if (run === undefined || (command.data.runId !== undefined && run?.threadId !== found.thread.id)) {
    return reject("run_not_found", `run ${command.data.runId ?? "?"} does not exist in thread ${found.thread.id}`);
  }
  if (run === null) return reject("no_active_run", `thread ${found.thread.id} has no active run`);
  if (isTerminalRunStatus(run.status) || run.status === "queued") {
    return reject("run_not_active", `run ${run.id} is ${run.status}`);
  }
  if (run.interruptRequestedAt !== null) return reject("interrupt_already_requested", `run ${run.id} is already being interrupted`);
  // Its turn is over: its background work is cancelled and it ends now, whatever the provider can interrupt.
  if (run.status === "settling_background_work") {
    interruptSettlingRun(changes, run, command.data.requestedBy ?? "user", command.data.reason ?? null);
    settleTask(changes, run.threadId);
    return changes.done();
  }
  const facts = turnFacts(ctx, run);
  if (facts !== null && !facts.capabilities.interrupt) {
    return reject("thread_not_interruptible", `provider instance ${run.providerInstanceId ?? "?"} cannot interrupt a turn`);
  }
  requestInterrupt(changes, run, command.data.requestedBy ?? "user", command.data.reason ?? null);
  return changes.done();
}

/**
 * thread.stop: like a user's Stop. Interrupts the running turn and holds the
 * queued runs until queue.resume, stops the workflows the thread runs with
 * their agent() tasks (as t3_workflow_stop), and ends a pull request watch. A turn whose provider cannot be interrupted
 * ends here, and its session is released so the process stops too. Stopping an idle thread is accepted and
 * changes nothing, so a repeated Stop is harmless.
 */
export function decideThreadStop(state: OrchestrationState, command: ThreadStopCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const reason = command.data.reason ?? "stopped";
  // One meaning of stop: the workflows this thread runs stop too, with every agent() task still working.
  for (const workflow of state.workflows.values()) {
    if (workflow.parentThreadId !== found.thread.id || workflow.status !== "running") continue;
    stopWorkflowIn(changes, workflow, command.data.reason ?? "its parent thread was stopped");
    for (const step of workflow.steps) {
      const task = step.taskId === null ? undefined : changes.task(step.taskId);
      if (task !== undefined && task.resultContextTransferId === null) stopTaskTree(changes, task, reason);
    }
  }
  // A thread waiting for a usage limit to reset stops waiting: its task (if any) settles on what ran.
  const waitedOnLimit = pendingLimitResume(changes, found.thread.id) !== null;
  const ended = stopThreadWork(changes, found.thread.id, reason);
  if (ended !== null || waitedOnLimit) settleTask(changes, found.thread.id);
  // Stop ends the thread's pull request watch (spec 000).
  const thread = changes.thread(found.thread.id) ?? found.thread;
  if ((thread.pullRequestWatch ?? null) !== null) changes.putThread("thread.pull-request-link-updated", changed(thread, ctx, { pullRequestWatch: null }));
  return changes.done();
}

/** queue.resume: release the runs Stop held; the first starts when the thread is idle. */
export function decideQueueResume(state: OrchestrationState, command: QueueResumeCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const held = queuedRuns(changes, found.thread.id).filter((run) => run.held);
  if (held.length === 0) return reject("queue_not_held", `thread ${found.thread.id} has no held queued runs`);
  for (const run of held) changes.updateRun(run, { held: false });
  startNext(changes, found.thread.id);
  return changes.done();
}

/** provider-session.detach: release the thread's provider session; a run still on it is interrupted. */
export function decideProviderSessionDetach(state: OrchestrationState, command: ProviderSessionDetachCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const session = [...state.providerSessions.values()].find((s) => s.threadId === found.thread.id && s.releasedAt === null);
  if (session === undefined) return reject("session_not_found", `thread ${found.thread.id} has no attached provider session`);
  const changes = new Changes(state, ctx);
  changes.effect(EffectKind.releaseSession, found.thread.id, { threadId: found.thread.id, providerSessionId: session.id, reason: "detached", message: command.data.reason ?? "detached by request" });
  return changes.done();
}
