import type { Command } from "../contracts/commands.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { AppThread } from "../contracts/thread.js";
import { toDomainEvent } from "../contracts/events.js";
import { type BudgetHolder, governingBudgets, holderSpend, reachedLimit, taskHolder, threadHolder } from "../core/budgets/budgets.js";
import type { Subscription } from "../store/eventStore.js";
import { type Clock, type TimerHandle, type Timers, systemTimers } from "./clock.js";
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
  private readonly timers = new Map<string, TimerHandle>();

  constructor(
    private readonly orchestrator: Orchestrator,
    private readonly clock: Clock = Date.now,
    private readonly log: (line: string) => void = () => undefined,
    /** Wall-clock limits' timers (the simulator's virtual ones, src/testkit/sim). */
    private readonly clockTimers: Timers = systemTimers,
  ) {}

  /** Check every budgeted task once, then follow the log; resolves once caught up. */
  async start(): Promise<void> {
    const state = this.orchestrator.state;
    const from = state.lastSequence;
    for (const task of state.tasks.values()) this.watch(task, from);
    for (const thread of state.threads.values()) this.watchThread(thread, from);
    this.subscription = this.orchestrator.follow(from, (event) => this.onEvent(event));
    await this.subscription.caughtUp;
  }

  stop(): void {
    this.subscription?.close();
    for (const timer of this.timers.values()) timer.cancel();
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
    else if (event.type === "thread.metadata-updated") {
      const thread = this.orchestrator.state.threads.get(event.data.thread.id);
      if (thread !== undefined) this.watchThread(thread, stored.sequence);
    }
    if (threadId === null) return;
    for (const holder of governingBudgets(this.orchestrator.state, threadId)) this.check(holder, stored.sequence);
  }

  /** A root thread whose budget was set or changed: check it, and arm its wall-clock timer while it is open. */
  private watchThread(thread: AppThread, sequence: number): void {
    const holder = threadHolder(thread);
    if (holder === null) {
      this.disarm(`thread:${thread.id}`);
      return;
    }
    this.check(holder, sequence);
    this.arm(holder, () => this.orchestrator.state.threads.get(thread.id), (current) => this.watchThread(current, this.orchestrator.state.lastSequence), true);
  }

  /** A new or changed task: check its budget, and arm its wall-clock timer while it is open. */
  private watch(task: DelegatedTask, sequence: number): void {
    if (task.budget === undefined || task.budget === null) return;
    const holder = taskHolder(task);
    this.check(holder, sequence);
    this.arm(holder, () => this.orchestrator.state.tasks.get(task.taskId), (current) => this.watch(current, this.orchestrator.state.lastSequence), task.resultContextTransferId === null);
  }

  /** One timer per open wall-clock limit, re-checking the holder when it comes. */
  private arm<T>(holder: BudgetHolder, current: () => T | undefined, recheck: (value: T) => void, open: boolean): void {
    const key = `${holder.kind}:${holder.id}`;
    const limit = holder.budget.wallClockMs;
    if (limit === undefined || holder.exceeded !== null || !open) {
      this.disarm(key);
      return;
    }
    if (this.timers.has(key)) return;
    const due = Date.parse(holder.since) + limit - this.clock();
    const timer = this.clockTimers.timeout(
      Math.min(Math.max(due, 0), MAX_TIMER_MS),
      () => {
        this.timers.delete(key);
        const value = current();
        if (value !== undefined) recheck(value);
      },
      { unref: true },
    );
    this.timers.set(key, timer);
  }

  private disarm(key: string): void {
    const timer = this.timers.get(key);
    timer?.cancel();
    this.timers.delete(key);
  }

  private check(holder: BudgetHolder, sequence: number): void {
    // A workflow's pool records no exhaustion: it refuses new turns under it (exhaustedBudget), and each agent() task's own budget stops its work.
    if (holder.exceeded !== null || holder.kind === "workflow") return;
    const now = new Date(this.clock()).toISOString();
    if (reachedLimit(holder.budget, holderSpend(this.orchestrator.state, holder, now)) === null) return;
    if (holder.kind === "task") this.dispatch({ type: "delegated-task.budget-exceed", commandId: `cmd:budget-exceed:${holder.id}:${sequence}`, data: { taskId: holder.id } });
    else this.dispatch({ type: "thread.budget-exceed", commandId: `cmd:thread-budget-exceed:${holder.id}:${sequence}`, data: { threadId: holder.id } });
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
