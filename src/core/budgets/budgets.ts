import { BUDGET_KINDS, type BudgetExceeded, type BudgetKind, type BudgetLimits, type BudgetPolicy, type BudgetRemaining, type BudgetSpend } from "../../contracts/entities/budgets.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../state.js";

/**
 * Tree-wide budgets (docs/budgets.md), pure: what a task's subtree spent, which
 * budgets govern a thread, and how a requested budget narrows an inherited
 * one. Spend is read from the folded state: run-attempt usage for tokens and
 * cost, runs off the queue for turns (holdsTurn), tasks for spawns, the task's age for wall-clock time.
 */

/**
 * What holds a budget: a delegated task (its subtree is its child thread's)
 * or a root thread (its whole tree). `since` is when wall-clock time starts.
 */
export interface BudgetHolder {
  readonly kind: "task" | "thread" | "workflow";
  /** The taskId, the root threadId or the workflowId. */
  readonly id: string;
  /** "task <id>", "thread <id>" or "workflow <id>", for messages. */
  readonly label: string;
  readonly title: string;
  readonly budget: BudgetLimits;
  readonly exceeded: BudgetExceeded | null;
  /** The top thread of the governed subtree. */
  readonly top: string;
  /** A workflow's pool: the tasks of its agent() calls, each a spawn with its subtree; `top` is unused. */
  readonly tasks?: readonly DelegatedTask[];
  readonly since: string;
}

export function taskHolder(task: DelegatedTask): BudgetHolder {
  return { kind: "task", id: task.taskId, label: `task ${task.taskId}`, title: task.title, budget: task.budget ?? {}, exceeded: task.budgetExceeded ?? null, top: task.childThreadId, since: task.createdAt };
}

export function threadHolder(thread: AppThread): BudgetHolder | null {
  const budget = thread.budget;
  if (budget === undefined || budget === null) return null;
  return { kind: "thread", id: thread.id, label: `thread ${thread.id}`, title: thread.title, budget: budget.limits, exceeded: budget.exceeded, top: thread.id, since: budget.since };
}

/** A workflow's pool as a holder over every agent() task's subtree; null without a budget. */
export function workflowHolder(state: OrchestrationState, workflow: Workflow): BudgetHolder | null {
  if (workflow.budget === null) return null;
  const tasks: DelegatedTask[] = [];
  for (const step of workflow.steps) {
    const task = step.taskId === null ? undefined : state.tasks.get(step.taskId);
    if (task !== undefined) tasks.push(task);
  }
  const name = workflow.name ?? workflow.workflowId;
  return { kind: "workflow", id: workflow.workflowId, label: `workflow ${workflow.workflowId}`, title: name, budget: workflow.budget, exceeded: null, top: workflow.parentThreadId, since: workflow.createdAt, tasks };
}

/** Every thread of a task's subtree: its child thread and all their descendants' threads. */
export function subtreeThreads(state: OrchestrationState, task: DelegatedTask): string[] {
  return treeThreads(state, task.childThreadId);
}

/** `top` and every thread delegated below it, at any depth. */
export function treeThreads(state: OrchestrationState, top: string): string[] {
  const threads = [top];
  for (let index = 0; index < threads.length; index += 1) {
    for (const candidate of state.tasks.values()) if (candidate.parentThreadId === threads[index]) threads.push(candidate.childThreadId);
  }
  return threads;
}

export function spendOf(state: OrchestrationState, task: DelegatedTask, now: string): BudgetSpend {
  return holderSpend(state, taskHolder(task), now);
}

export function holderSpend(state: OrchestrationState, holder: BudgetHolder, now: string): BudgetSpend {
  const threads = new Set(holder.tasks === undefined ? treeThreads(state, holder.top) : holder.tasks.flatMap((task) => treeThreads(state, task.childThreadId)));
  let tokens = 0;
  let turns = 0;
  let costUsd = 0;
  for (const threadId of threads) {
    for (const runId of state.threadRuns.get(threadId) ?? []) {
      const run = state.runs.get(runId);
      if (run === undefined || !holdsTurn(state, run)) continue;
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
  spawns += holder.tasks?.length ?? 0;
  const wallClockMs = Math.max(0, Date.parse(now) - Date.parse(holder.since));
  return { tokens, turns, wallClockMs, spawns, costUsd };
}

/**
 * A run holds a turn of every pool over its thread from the decision that
 * takes it off the queue (started at once, or by startNext): the check and
 * the reservation are one step, so runs decided together cannot all pass a
 * `turns` limit. A run still queued holds none yet; one cancelled before its
 * provider ever started it gives its turn back.
 */
export function holdsTurn(state: OrchestrationState, run: Run): boolean {
  if (run.status === "queued") return false;
  if (run.status === "cancelled" && run.startedAt === null) return (state.runAttempts.get(run.id)?.length ?? 0) > 0;
  return true;
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

/** What a budget view adds to limits and spend: what is left of each limit and every limit reached now (admit: spend at or past it). */
export function budgetReading(budget: BudgetLimits, spend: BudgetSpend): { readonly remaining: BudgetRemaining; readonly reached: BudgetKind[] } {
  const remaining: { -readonly [K in keyof BudgetRemaining]: BudgetRemaining[K] } = {};
  const reached: BudgetKind[] = [];
  for (const kind of BUDGET_KINDS) {
    const limit = budget[kind];
    if (limit === undefined) continue;
    remaining[kind] = Math.max(0, limit - spend[kind]);
    if (spend[kind] >= limit) reached.push(kind);
  }
  return { remaining, reached };
}

/** The budgets whose tree holds `threadId`, nearest first: the tasks with a budget (and the workflow pool of an agent() task) up the delegation chain, then the root thread's. */
export function governingBudgets(state: OrchestrationState, threadId: string): BudgetHolder[] {
  const found: BudgetHolder[] = [];
  const seen = new Set<string>();
  let current: string | undefined = threadId;
  while (current !== undefined && !seen.has(current)) {
    seen.add(current);
    const taskId = state.taskByChildThread.get(current);
    const task = taskId === undefined ? undefined : state.tasks.get(taskId);
    if (task === undefined) break;
    if (task.budget !== undefined && task.budget !== null) found.push(taskHolder(task));
    // An agent() task draws on its workflow's one pool too, shared with every other agent() of it.
    const workflow = task.workflowStep === undefined ? undefined : state.workflows.get(task.workflowStep.workflowId);
    const pool = workflow === undefined ? null : workflowHolder(state, workflow);
    if (pool !== null) found.push(pool);
    current = task.parentThreadId;
  }
  const top = current === undefined ? undefined : state.threads.get(current);
  const root = top === undefined ? null : threadHolder(top);
  if (root !== null) found.push(root);
  return found;
}

/** What running work does once the holder's budget ran out: the recorded policy, else the budget's own (stop by default). */
export function budgetPolicy(holder: BudgetHolder): BudgetPolicy {
  return holder.exceeded?.policy ?? holder.budget.onExceeded ?? "stop";
}

/** How a refusal names the budget that ran out: which limit, its spend, and (paused) how to go on. */
export function exhaustedText(exhausted: NonNullable<ReturnType<typeof exhaustedBudget>>): string {
  const { kind, limit, spent } = exhausted.exceeded;
  const paused = budgetPolicy(exhausted.holder) === "pause" ? "; paused on budget until it is raised (t3_budget_raise)" : "";
  return `the ${kind} budget of ${exhausted.holder.label} ran out (${spent} of ${limit})${paused}`;
}

/** A budget as a decision that changes it sees it before its events fold in (budget.raise). */
export type BudgetAdjust = (holder: BudgetHolder) => BudgetHolder;

/** A budget that ran out (recorded) or is reached now, governing `threadId`; null when every one has room. */
export function exhaustedBudget(
  state: OrchestrationState,
  threadId: string,
  now: string,
  adjust: BudgetAdjust = (holder) => holder,
): { readonly holder: BudgetHolder; readonly exceeded: Omit<BudgetExceeded, "at" | "policy"> } | null {
  for (const holder of governingBudgets(state, threadId).map(adjust)) {
    if (holder.exceeded !== null) return { holder, exceeded: holder.exceeded };
    const reached = reachedLimit(holder.budget, holderSpend(state, holder, now), "admit");
    if (reached !== null) return { holder, exceeded: reached };
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
  for (const holder of governingBudgets(state, parentThreadId)) {
    const budget = holder.budget;
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
