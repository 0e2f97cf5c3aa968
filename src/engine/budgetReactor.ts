import type { Command } from "../contracts/commands.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import { toDomainEvent } from "../contracts/events.js";
import { governingTasks, reachedLimit, spendOf } from "../core/budgets/budgets.js";
import type { Subscription } from "../store/eventStore.js";
import type { Orchestrator } from "./orchestrator.js";

/** Wall-clock deadlines further out than this are re-armed when they come (setTimeout's range). */
const MAX_TIMER_MS = 2_000_000_000;

/**
 * Enforces tree-wide budgets (docs/budgets.md). It follows the committed log:
 * whenever usage, a run or a task changes in a thread, every budget governing
 * that thread is checked against its subtree's spend, and a budget that is
 * reached gets `delegated-task.budget-exceed` (which records it, stops the
 * work per policy and notifies the root). Wall-clock limits get a timer per
 * task. The decider re-checks, so a stale or repeated ask is only a rejection.
 */
export class BudgetReactor {
  private subscription: Subscription | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly orchestrator: Orchestrator,
    private readonly clock: () => number = Date.now,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Check every budgeted task once, then follow the log; resolves once caught up. */
  async start(): Promise<void> {
    const state = this.orchestrator.state;
    const from = state.lastSequence;
    for (const task of state.tasks.values()) this.watch(task, from);
    this.subscription = this.orchestrator.follow(from, (event) => this.onEvent(event));
    await this.subscription.caughtUp;
  }

  stop(): void {
    this.subscription?.close();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private onEvent(stored: StoredEvent): void {
    const event = toDomainEvent(stored);
    let threadId: string | null = null;
    if (event.type === "run-attempt.updated" || event.type === "run-attempt.created") threadId = event.data.attempt.threadId;
    else if (event.type === "run.updated" || event.type === "run.created") threadId = event.data.run.threadId;
    else if (event.type === "subagent.updated" && event.data.task !== null) {
      const task = this.orchestrator.state.tasks.get(event.data.task.taskId);
      if (task !== undefined) this.watch(task, stored.sequence);
      threadId = event.data.task.parentThreadId;
    }
    if (threadId === null) return;
    for (const task of governingTasks(this.orchestrator.state, threadId)) this.check(task, stored.sequence);
  }

  /** A new or changed task: check its budget, and arm its wall-clock timer while it is open. */
  private watch(task: DelegatedTask, sequence: number): void {
    if (task.budget === undefined || task.budget === null) return;
    this.check(task, sequence);
    const limit = task.budget.wallClockMs;
    const open = task.budgetExceeded === null || task.budgetExceeded === undefined;
    if (limit === undefined || !open || task.resultContextTransferId !== null) {
      const timer = this.timers.get(task.taskId);
      if (timer !== undefined) clearTimeout(timer);
      this.timers.delete(task.taskId);
      return;
    }
    if (this.timers.has(task.taskId)) return;
    const due = Date.parse(task.createdAt) + limit - this.clock();
    const timer = setTimeout(
      () => {
        this.timers.delete(task.taskId);
        const current = this.orchestrator.state.tasks.get(task.taskId);
        if (current !== undefined) this.watch(current, this.orchestrator.state.lastSequence);
      },
      Math.min(Math.max(due, 0), MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(task.taskId, timer);
  }

  private check(task: DelegatedTask, sequence: number): void {
    if (task.budget === undefined || task.budget === null || (task.budgetExceeded !== undefined && task.budgetExceeded !== null)) return;
    const now = new Date(this.clock()).toISOString();
    if (reachedLimit(task.budget, spendOf(this.orchestrator.state, task, now)) === null) return;
    this.dispatch({ type: "delegated-task.budget-exceed", commandId: `cmd:budget-exceed:${task.taskId}:${sequence}`, data: { taskId: task.taskId } });
  }

  private dispatch(command: Command): void {
    this.orchestrator.dispatch(command).then(
      (receipt) => {
        if (receipt.status === "rejected" && receipt.rejection.code !== "budget_already_exceeded" && receipt.rejection.code !== "budget_not_exceeded") {
          this.log(`loom: ${command.type} rejected: ${receipt.rejection.message}`);
        }
      },
      (error: unknown) => this.log(`loom: ${command.type} failed: ${String(error)}`),
    );
  }
}
