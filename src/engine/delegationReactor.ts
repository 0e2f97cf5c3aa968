import type { Command } from "../contracts/commands.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import { isApprovalKind, type RuntimeRequest } from "../contracts/entities/runtimeRequests.js";
import { toDomainEvent } from "../contracts/events.js";
import type { Subscription } from "../store/eventStore.js";
import { lastLostNoticeRun } from "../core/delegation/lostNotices.js";
import type { Orchestrator } from "./orchestrator.js";
import { completionGoesThroughTask, isHeld } from "../core/delegation/holds.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";

/**
 * Turns delegation facts into notices for parents (DESIGN.md §5): a task
 * whose result is ready and a child's open question reach the parent as a
 * durable notice, unless a recorded wait holds the task (docs/delegation.md,
 * "Waits and notices"). It decides from the folded state alone, so the
 * reactors of several nodes on one database reach the same decisions, and
 * core refuses a notice a wait holds, so exactly one delivery happens.
 *
 * It follows the committed log by sequence (Orchestrator.follow), never an
 * in-process callback, so it sees exactly what the log holds. On start it
 * catches up from the folded state — pending deliveries, unrouted questions
 * and tasks whose work ended without a final result — then follows every
 * later event. Every command it sends has a derived id, so repeating one
 * after a restart changes nothing.
 */
/** Rejections that only mean another decision got there first (a delivery, a wait, a child still at work). */
const QUIET_REJECTIONS: ReadonlySet<string> = new Set(["delivery_not_pending", "delivery_held", "task_still_working"]);

/** The run statuses at which a run owed a question gets it as a notice. */
const CATCH_UP_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "settling_background_work"]);

export class DelegationReactor {
  private subscription: Subscription | null = null;
  /** Results left to their MCP task, by the run that made the call: looked at again when that run leaves its turn. */
  private readonly leftToTask = new Map<string, Set<string>>();

  constructor(
    private readonly orchestrator: Orchestrator,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Catch up, then follow the log; resolves once caught up. */
  async start(): Promise<void> {
    const state = this.orchestrator.state;
    const from = state.lastSequence;
    for (const task of state.tasks.values()) {
      if (task.resultContextTransferId === null) this.dispatch({ type: "delegated-task.finalize", commandId: `cmd:finalize:${task.taskId}:${from}`, data: { taskId: task.taskId } });
      else if (task.completionDelivery === "pending") this.deliverCompletion(task);
    }
    for (const request of state.runtimeRequests.values()) this.routeQuestion(request);
    for (const task of state.tasks.values()) if (task.questionsOwedTo != null) this.catchUpQuestions(task.questionsOwedTo);
    this.subscription = this.orchestrator.follow(from, (event) => this.onEvent(event));
    await this.subscription.caughtUp;
  }

  stop(): void {
    this.subscription?.close();
  }

  /**
   * Deliver a pending result now unless a wait holds it (the wait's end is a
   * subagent.updated, so it is looked at again then) or it goes through its
   * MCP task (looked at again when the calling run leaves its turn).
   */
  private deliverCompletion(task: DelegatedTask): void {
    if (task.completionDelivery !== "pending" || isHeld(task)) return;
    if (completionGoesThroughTask(this.orchestrator.state, task)) {
      const left = this.leftToTask.get(task.parentRunId) ?? new Set<string>();
      this.leftToTask.set(task.parentRunId, left.add(task.taskId));
      return;
    }
    // After a lost delivery the command id names the lost run, so each loss is answered once and repeats change nothing.
    const lost = lastLostNoticeRun(task.notices, "completion", null);
    const commandId = lost === null ? `cmd:deliver:${task.taskId}` : `cmd:deliver:${task.taskId}:after:${lost}`;
    this.dispatch({ type: "delegated-task.deliver-notice", commandId, data: { taskId: task.taskId, kind: "completion", requestId: null } });
  }

  /**
   * Route a child's open question to its parent, and its approval requests
   * when the task routes them to the parent (docs/delegation.md). A blocking
   * one goes through a delegate_task wait instead while one holds the task
   * (spec 000); an asynchronous one never ends that wait, so it is routed
   * regardless.
   */
  private routeQuestion(request: RuntimeRequest): void {
    const approval = isApprovalKind(request.kind);
    if ((request.kind !== "user_input" && !approval) || request.status !== "pending") return;
    const state = this.orchestrator.state;
    const taskId = state.taskByChildThread.get(request.threadId);
    const task = taskId === undefined ? undefined : state.tasks.get(taskId);
    if (taskId === undefined || task === undefined || (request.blocking && isHeld(task)) || task.notices.some((notice) => notice.requestId === request.id && notice.lostAt === undefined)) return;
    if (approval && task.approvalRouting !== "parent") return;
    const kind = approval ? "approval" : "question";
    const lost = lastLostNoticeRun(task.notices, kind, request.id);
    const commandId = lost === null ? `cmd:${kind}:${request.id}` : `cmd:${kind}:${request.id}:after:${lost}`;
    this.dispatch({ type: "delegated-task.deliver-notice", commandId, data: { taskId, kind, requestId: request.id } });
  }

  private onEvent(stored: StoredEvent): void {
    const event = toDomainEvent(stored);
    if (event.type === "subagent.updated") {
      // The event carries the task as of that commit; act on its current state.
      const task = event.data.task === null ? undefined : this.orchestrator.state.tasks.get(event.data.task.taskId);
      if (task !== undefined) this.deliverCompletion(task);
    } else if (event.type === "runtime-request.updated") {
      const request = this.orchestrator.state.runtimeRequests.get(event.data.request.id);
      if (request !== undefined) this.routeQuestion(request);
    } else if (event.type === "run.updated") {
      const { id, status } = event.data.run;
      if (CATCH_UP_STATUSES.has(status)) this.catchUpQuestions(id);
      if (status === "settling_background_work" || isTerminalRunStatus(status)) this.deliverTaskResults(id);
    }
  }

  /** A run left its turn: the results of the MCP tasks it made and never read are noticed now. */
  private deliverTaskResults(runId: string): void {
    const left = this.leftToTask.get(runId);
    if (left === undefined) return;
    this.leftToTask.delete(runId);
    for (const taskId of left) {
      const task = this.orchestrator.state.tasks.get(taskId);
      if (task !== undefined) this.deliverCompletion(task);
    }
  }

  /**
   * A parent run whose wait was cut short with a question pending (the
   * task's questionsOwedTo): once it completes, fails or settles its
   * background work, the still-pending questions wake the parent. A stopped
   * or interrupted run never gets here, so its catch-up is cancelled.
   */
  private catchUpQuestions(runId: string): void {
    const state = this.orchestrator.state;
    const run = state.runs.get(runId);
    if (run === undefined || !CATCH_UP_STATUSES.has(run.status)) return;
    for (const task of state.tasks.values()) {
      if (task.questionsOwedTo !== runId) continue;
      for (const request of state.runtimeRequests.values()) {
        if (request.threadId === task.childThreadId) this.routeQuestion(request);
      }
    }
  }

  private dispatch(command: Command): void {
    this.orchestrator.dispatch(command).then(
      (receipt) => {
        if (receipt.status === "rejected" && !QUIET_REJECTIONS.has(receipt.rejection.code)) {
          this.log(`loom: ${command.type} rejected: ${receipt.rejection.message}`);
        }
      },
      (error: unknown) => this.log(`loom: ${command.type} failed: ${String(error)}`),
    );
  }
}
