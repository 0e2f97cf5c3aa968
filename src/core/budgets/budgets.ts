import { BUDGET_KINDS, type BudgetExceeded, type BudgetKind, type BudgetLimits, type BudgetSpend } from "../../contracts/entities/budgets.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { OrchestrationState } from "../state.js";

/**
 * Tree-wide budgets (docs/budgets.md), pure: what a task's subtree spent, which
 * budgets govern a thread, and how a requested budget narrows an inherited
 * one. Spend is read from the folded state: run-attempt usage for tokens and
 * cost, runs for turns, tasks for spawns, the task's age for wall-clock time.
 */

/** Every thread of a task's subtree: its child thread and all their descendants' threads. */
export function subtreeThreads(state: OrchestrationState, task: DelegatedTask): string[] {
  const threads = [task.childThreadId];
  for (let index = 0; index < threads.length; index += 1) {
    for (const candidate of state.tasks.values()) if (candidate.parentThreadId === threads[index]) threads.push(candidate.childThreadId);
  }
  return threads;
}

export function spendOf(state: OrchestrationState, task: DelegatedTask, now: string): BudgetSpend {
  const threads = new Set(subtreeThreads(state, task));
  let tokens = 0;
  let turns = 0;
  let costUsd = 0;
  for (const threadId of threads) {
    for (const runId of state.threadRuns.get(threadId) ?? []) {
      const run = state.runs.get(runId);
      if (run === undefined || run.startedAt === null) continue;
      turns += 1;
      for (const attemptId of state.runAttempts.get(runId) ?? []) {
        const usage = state.attempts.get(attemptId)?.usage;
        if (usage === undefined || usage === null) continue;
        tokens += usage.inputTokens + usage.outputTokens;
        costUsd += usage.costUsd ?? 0;
      }
    }
  }
  let spawns = 0;
  for (const candidate of state.tasks.values()) if (threads.has(candidate.parentThreadId)) spawns += 1;
  const wallClockMs = Math.max(0, Date.parse(now) - Date.parse(task.createdAt));
  return { tokens, turns, wallClockMs, spawns, costUsd };
}

/** Counted kinds: a limit of N allows N, so it runs out only when an N+1th is under way. */
const COUNTED: ReadonlySet<BudgetKind> = new Set(["turns", "spawns"]);

/**
 * The first limit the spend has used up, or null. `admit` (may something new
 * start?): any limit reached. `run` (must running work stop?): tokens, cost
 * and wall-clock time at or over their limit, turns and spawns over theirs.
 */
export function reachedLimit(budget: BudgetLimits, spend: BudgetSpend, mode: "admit" | "run" = "run"): { readonly kind: BudgetKind; readonly limit: number; readonly spent: number } | null {
  for (const kind of BUDGET_KINDS) {
    const limit = budget[kind];
    if (limit === undefined) continue;
    const over = mode === "run" && COUNTED.has(kind) ? spend[kind] > limit : spend[kind] >= limit;
    if (over) return { kind, limit, spent: spend[kind] };
  }
  return null;
}

/** The tasks with a budget whose subtree holds `threadId`, nearest first. */
export function governingTasks(state: OrchestrationState, threadId: string): DelegatedTask[] {
  const found: DelegatedTask[] = [];
  const seen = new Set<string>();
  let current: string | undefined = threadId;
  while (current !== undefined && !seen.has(current)) {
    seen.add(current);
    const taskId = state.taskByChildThread.get(current);
    const task = taskId === undefined ? undefined : state.tasks.get(taskId);
    if (task === undefined) break;
    if (task.budget !== undefined && task.budget !== null) found.push(task);
    current = task.parentThreadId;
  }
  return found;
}

/** A budget that ran out (recorded) or is reached now, governing `threadId`; null when every one has room. */
export function exhaustedBudget(state: OrchestrationState, threadId: string, now: string): { readonly task: DelegatedTask; readonly exceeded: Omit<BudgetExceeded, "at" | "policy"> } | null {
  for (const task of governingTasks(state, threadId)) {
    if (task.budgetExceeded !== undefined && task.budgetExceeded !== null) return { task, exceeded: task.budgetExceeded };
    const reached = reachedLimit(task.budget!, spendOf(state, task, now), "admit");
    if (reached !== null) return { task, exceeded: reached };
  }
  return null;
}

/**
 * The budget a new task under `parentThreadId` records: the requested limits,
 * each checked to be no wider than the narrowest inherited one. Inherited
 * limits are not copied: the ancestors' budgets keep governing the new
 * subtree as one shared pool (governingTasks), so nothing is counted twice.
 * A requested limit wider than an inherited one is an error (the returned
 * string), never silently clamped.
 */
export function narrowedBudget(state: OrchestrationState, parentThreadId: string, requested: BudgetLimits | undefined): BudgetLimits | null | string {
  const inherited: { -readonly [K in keyof BudgetLimits]: BudgetLimits[K] } = {};
  // Nearest first: the nearest policy wins; every limit is the narrowest along the path.
  for (const task of governingTasks(state, parentThreadId)) {
    const budget = task.budget!;
    if (inherited.onExceeded === undefined && budget.onExceeded !== undefined) inherited.onExceeded = budget.onExceeded;
    for (const kind of BUDGET_KINDS) {
      const limit = budget[kind];
      if (limit !== undefined) inherited[kind] = Math.min(limit, inherited[kind] ?? limit);
    }
  }
  if (requested === undefined) return null;
  for (const kind of BUDGET_KINDS) {
    const want = requested[kind];
    const have = inherited[kind];
    if (want !== undefined && have !== undefined && want > have) return `budget.${kind} ${want} is wider than the inherited ${have}`;
  }
  return definedLimits(requested);
}

function definedLimits(budget: BudgetLimits): BudgetLimits {
  return Object.fromEntries(Object.entries(budget).filter(([, value]) => value !== undefined));
}
