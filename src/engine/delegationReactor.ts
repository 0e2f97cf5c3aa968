import type { StoredEvent } from "../contracts/envelopes.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { RuntimeRequest } from "../contracts/entities/runtimeRequests.js";
import type { Orchestrator } from "./orchestrator.js";

/**
 * delegate_task waits in progress, by task. While a wait is there to hand the
 * parent its task's result or question, the reactor does not also notify the
 * parent (spec 000: "a parent still blocked in a delegate_task wait gets the
 * blocking question through that wait instead").
 */
export class TaskWaiters {
  private readonly counts = new Map<string, number>();

  has(taskId: string): boolean {
    return (this.counts.get(taskId) ?? 0) > 0;
  }

  /** Register a wait; the returned function ends it. */
  register(taskId: string, onRelease: () => void): () => void {
    this.counts.set(taskId, (this.counts.get(taskId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(taskId) ?? 1) - 1;
      if (left === 0) this.counts.delete(taskId);
      else this.counts.set(taskId, left);
      onRelease();
    };
  }
}

/**
 * Turns delegation facts into notices for parents (DESIGN.md §5): a task
 * whose result is ready and a child's open question reach the parent as a
 * durable notice, unless a delegate_task wait is receiving them. On start it
 * also catches up with what a restart left behind: pending deliveries,
 * unrouted questions, and tasks whose work ended without a final result.
 */
export class DelegationReactor {
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly orchestrator: Orchestrator,
    readonly waiters: TaskWaiters,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  start(): void {
    this.unsubscribe = this.orchestrator.onCommitted((events) => this.onEvents(events));
    const state = this.orchestrator.state;
    for (const task of state.tasks.values()) {
      if (task.resultContextTransferId === null) this.dispatch({ type: "delegated-task.finalize", commandId: `cmd:finalize:${task.taskId}:${state.lastSequence}`, data: { taskId: task.taskId } });
      else if (task.completionDelivery === "pending") this.deliverCompletion(task);
    }
    for (const request of state.runtimeRequests.values()) this.routeQuestion(request);
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Deliver a pending result now unless a wait is taking it (called when a wait ends without it). */
  deliverCompletion(task: DelegatedTask): void {
    if (task.completionDelivery !== "pending" || this.waiters.has(task.taskId)) return;
    this.dispatch({ type: "delegated-task.deliver-notice", commandId: `cmd:deliver:${task.taskId}`, data: { taskId: task.taskId, kind: "completion", requestId: null } });
  }

  private routeQuestion(request: RuntimeRequest): void {
    if (request.kind !== "user_input" || request.status !== "pending") return;
    const state = this.orchestrator.state;
    const taskId = state.taskByChildThread.get(request.threadId);
    if (taskId === undefined || this.waiters.has(taskId)) return;
    const task = state.tasks.get(taskId);
    if (task === undefined || task.notices.some((notice) => notice.requestId === request.id)) return;
    this.dispatch({ type: "delegated-task.deliver-notice", commandId: `cmd:question:${request.id}`, data: { taskId, kind: "question", requestId: request.id } });
  }

  private onEvents(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.type === "subagent.updated") {
        const task = (event.data as { task: DelegatedTask | null }).task;
        if (task !== null) this.deliverCompletion(task);
      } else if (event.type === "runtime-request.updated") {
        this.routeQuestion((event.data as { request: RuntimeRequest }).request);
      }
    }
  }

  private dispatch(command: Parameters<Orchestrator["dispatch"]>[0]): void {
    this.orchestrator.dispatch(command).then(
      (receipt) => {
        if (receipt.status === "rejected" && receipt.rejection.code !== "delivery_not_pending" && receipt.rejection.code !== "task_still_working") {
          this.log(`loom: ${command.type} rejected: ${receipt.rejection.message}`);
        }
      },
      (error: unknown) => this.log(`loom: ${command.type} failed: ${String(error)}`),
    );
  }
}
