import type { StoredEvent } from "../../contracts/envelopes.js";
import { type DomainEvent, toDomainEvent } from "../../contracts/events.js";
import type { BudgetKind, BudgetSpend } from "../../contracts/entities/budgets.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { RunKind, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type BudgetHolder, governingBudgets, holderSpend, holdsTurn, reachedLimit, taskHolder, threadHolder, treeThreads, workflowHolder } from "../../core/budgets/budgets.js";
import { evolve, initialState, type OrchestrationState } from "../../core/state.js";

/**
 * The `budgets-never-exceeded` invariant (docs/simulation.md, docs/budgets.md
 * "The bound"). It folds the committed log afresh with core's evolve, one
 * command's events at a time, and judges each command on the state just
 * before it, with core's own budget ledger (governingBudgets, holderSpend,
 * holdsTurn, reachedLimit):
 *
 * - admissions: every task delegated and every turn taken off the queue
 *   (system follow-ups excepted, as documented) under a budget (an agent()
 *   task and its first turn under its workflow's pool too) was admitted
 *   while that budget had room: nothing recorded as exhausted, no limit
 *   reached, and its spawns and turns plus those the same command admitted
 *   within their limits (the limits as the command leaves them: a raise
 *   admits under the raised ones). So spawns and turns never pass their limits;
 * - tokens and cost: once a pool's tokens (or cost) reach the limit, only the
 *   turns running at that moment and system follow-ups add to them, so the
 *   pool ends at its spend then plus what those turns spent.
 */

export interface Reach {
  readonly spent: number;
  /** Runs holding a turn and not yet ended when the pool was reached. */
  readonly running: ReadonlySet<string>;
  /** What every other run of the pool's tree had spent then (moved on once a run past it is reported, so it is reported once). */
  readonly frozen: Map<string, number>;
}

interface Ledger {
  readonly state: OrchestrationState;
  folded: number;
  /** Per budget (holder, limits and since) and kind: when its tokens or cost were first reached. */
  readonly reached: Map<string, Reach>;
}

/** One ledger per simulated log: the check follows the log as it grows. */
const LEDGERS = new WeakMap<readonly StoredEvent[], Ledger>();

const POOLED: readonly ("tokens" | "costUsd")[] = ["tokens", "costUsd"];

export function checkBudgets(log: readonly StoredEvent[]): string[] {
  let ledger = LEDGERS.get(log);
  if (ledger === undefined) LEDGERS.set(log, (ledger = { state: initialState(), folded: 0, reached: new Map() }));
  const problems: string[] = [];
  while (ledger.folded < log.length) {
    const start = ledger.folded;
    let end = start + 1;
    while (end < log.length && log[end]!.commandId === log[start]!.commandId) end += 1;
    const events = log.slice(start, end).map(toDomainEvent);
    const admissions = admissionsBefore(ledger.state, events);
    for (const event of events) evolve(ledger.state, event);
    ledger.state.lastSequence = log[end - 1]!.sequence;
    ledger.folded = end;
    problems.push(...judgeAdmissions(ledger.state, admissions, log[start]!.commandId));
    problems.push(...judgePools(ledger, log[start]!.occurredAt));
  }
  return problems;
}

/** The pools whose tokens or cost a log reached, by budget and kind, as checkBudgets saw them: what a test plants against. */
export function reachedPools(log: readonly StoredEvent[]): ReadonlyMap<string, Reach> {
  checkBudgets(log);
  return LEDGERS.get(log)!.reached;
}

interface Charged {
  readonly holder: BudgetHolder;
  readonly spend: BudgetSpend;
  spawns: number;
  turns: number;
  readonly what: string[];
}

interface Admissions {
  /** The budgets each new task or newly held run is charged to, read before the command. */
  readonly spawns: Map<string, readonly BudgetHolder[]>;
  readonly runs: Map<string, readonly BudgetHolder[]>;
  readonly spends: Map<string, BudgetSpend>;
  /** Tasks with a budget of their own created by the command. */
  readonly newHolders: string[];
}

const keyOf = (holder: BudgetHolder) => `${holder.kind}:${holder.id}`;

/** What the command may admit, with the budgets over it and their spend, read on the state before it. */
function admissionsBefore(before: OrchestrationState, events: readonly DomainEvent[]): Admissions {
  const admissions: Admissions = { spawns: new Map(), runs: new Map(), spends: new Map(), newHolders: [] };
  const parentOf = new Map<string, string>();
  /** A new agent() task's child thread: its workflow's pool, which governs it (not its parent) from the decision that creates it. */
  const poolOf = new Map<string, readonly BudgetHolder[]>();
  const holdersOf = (threadId: string, now: string, pool: readonly BudgetHolder[] = []) => {
    const holders = [...governingBudgets(before, threadId), ...pool];
    for (const holder of holders) if (!admissions.spends.has(keyOf(holder))) admissions.spends.set(keyOf(holder), holderSpend(before, holder, now));
    return holders;
  };
  for (const event of events) {
    if (event.type !== "subagent.updated" || event.data.task === null || before.tasks.has(event.data.task.taskId)) continue;
    const task = event.data.task;
    parentOf.set(task.childThreadId, task.parentThreadId);
    poolOf.set(task.childThreadId, workflowPool(before, task));
    admissions.spawns.set(task.taskId, holdersOf(task.parentThreadId, task.createdAt, poolOf.get(task.childThreadId)));
    if (task.budget !== undefined && task.budget !== null) admissions.newHolders.push(task.taskId);
  }
  for (const event of events) {
    if (event.type !== "run.created" && event.type !== "run.updated") continue;
    const run = event.data.run;
    const earlier = before.runs.get(run.id);
    if (admissions.runs.has(run.id) || (earlier !== undefined && holdsTurn(before, earlier))) continue;
    // A new child's first run is charged to the budgets over its parent, where the child joins them (and to its workflow's pool).
    const anchor = before.threads.has(run.threadId) ? run.threadId : parentOf.get(run.threadId);
    admissions.runs.set(run.id, anchor === undefined ? [] : holdersOf(anchor, run.updatedAt, poolOf.get(run.threadId)));
  }
  return admissions;
}

/** The pool of the workflow whose agent() call `task` is, as it stood before the task: none for another task or a workflow without a budget. */
function workflowPool(before: OrchestrationState, task: DelegatedTask): readonly BudgetHolder[] {
  const workflow = task.workflowStep === undefined ? undefined : before.workflows.get(task.workflowStep.workflowId);
  const pool = workflow === undefined ? null : workflowHolder(before, workflow);
  return pool === null ? [] : [pool];
}

function judgeAdmissions(after: OrchestrationState, admissions: Admissions, commandId: string): string[] {
  const charged = new Map<string, Charged>();
  const charge = (holders: readonly BudgetHolder[], kind: "spawns" | "turns", what: string) => {
    for (const holder of holders) {
      const key = keyOf(holder);
      let entry = charged.get(key);
      if (entry === undefined) charged.set(key, (entry = { holder, spend: admissions.spends.get(key)!, spawns: 0, turns: 0, what: [] }));
      entry[kind] += 1;
      entry.what.push(what);
    }
  };
  for (const [taskId, holders] of admissions.spawns) charge(holders, "spawns", `task ${taskId}`);
  for (const [runId, holders] of admissions.runs) {
    const run = after.runs.get(runId);
    // A system follow-up (a notice, a delegated result, a re-sent message) starts under a spent budget by design.
    if (run === undefined || run.kind === RunKind.systemFollowUp || !holdsTurn(after, run)) continue;
    charge(holders, "turns", `run ${runId}`);
  }
  const problems: string[] = [];
  // A command that changes a budget and admits work under it (budget.raise starting paused turns) is judged against the budget it leaves.
  const left = charged.size === 0 ? new Map<string, BudgetHolder>() : new Map(budgetHolders(after).map((holder) => [keyOf(holder), holder]));
  for (const { holder: before, spend, spawns, turns, what } of charged.values()) {
    const holder = left.get(keyOf(before));
    // The command cleared that budget (thread.budget.set null): nothing it admitted is under it.
    if (holder === undefined) continue;
    const admitted = `${what.join(", ")} (${commandId})`;
    if (holder.exceeded !== null) problems.push(`${admitted} started under ${holder.label}, whose ${holder.exceeded.kind} budget had run out`);
    else {
      const reached = reachedLimit(holder.budget, spend, "admit");
      if (reached !== null) problems.push(`${admitted} started under ${holder.label}, whose ${reached.kind} limit ${reached.limit} was reached (spent ${reached.spent})`);
    }
    const limits = holder.budget;
    if (limits.spawns !== undefined && spend.spawns + spawns > limits.spawns) problems.push(`${holder.label} spawned ${spend.spawns + spawns} tasks, past its limit of ${limits.spawns}: ${admitted}`);
    if (limits.turns !== undefined && turns > 0 && spend.turns + turns > limits.turns) problems.push(`${holder.label} holds ${spend.turns + turns} turns, past its limit of ${limits.turns}: ${admitted}`);
  }
  // A task's own budget governs its child's first turn from the decision that created both.
  for (const taskId of admissions.newHolders) {
    const task = after.tasks.get(taskId);
    if (task === undefined) continue;
    const holder = taskHolder(task);
    const spend = holderSpend(after, holder, task.createdAt);
    for (const kind of ["spawns", "turns"] as const) {
      const limit = holder.budget[kind];
      if (limit !== undefined && spend[kind] > limit) problems.push(`${holder.label} starts with ${spend[kind]} ${kind}, past its limit of ${limit} (${commandId})`);
    }
  }
  return problems;
}

/** Every budget in force: root threads', tasks' and workflows' pools. */
function budgetHolders(state: OrchestrationState): BudgetHolder[] {
  const holders: BudgetHolder[] = [];
  for (const thread of state.threads.values()) {
    const holder = thread.lineage.parentThreadId === null ? threadHolder(thread) : null;
    if (holder !== null) holders.push(holder);
  }
  for (const task of state.tasks.values()) if (task.budget !== undefined && task.budget !== null) holders.push(taskHolder(task));
  for (const workflow of state.workflows.values()) {
    const holder = workflowHolder(state, workflow);
    if (holder !== null) holders.push(holder);
  }
  return holders;
}

function poolRuns(state: OrchestrationState, holder: BudgetHolder): string[] {
  const threads = holder.tasks === undefined ? treeThreads(state, holder.top) : holder.tasks.flatMap((task) => treeThreads(state, task.childThreadId));
  return [...new Set(threads)].flatMap((threadId) => state.threadRuns.get(threadId) ?? []);
}

/** What one run adds to a pool's tokens or cost, counted as holderSpend counts it: its attempts' usage, while it holds a turn. */
function runSpend(state: OrchestrationState, runId: string, kind: "tokens" | "costUsd"): number {
  const run = state.runs.get(runId);
  if (run === undefined || !holdsTurn(state, run)) return 0;
  let total = 0;
  for (const attemptId of state.runAttempts.get(runId) ?? []) {
    const usage = state.attempts.get(attemptId)?.usage;
    if (usage === undefined || usage === null) continue;
    total += kind === "tokens" ? usage.inputTokens + usage.outputTokens : (usage.costUsd ?? 0);
  }
  return total;
}

/** Tokens and cost: after a pool is reached, only the turns running then (and system follow-ups) add to it. */
function judgePools(ledger: Ledger, now: string): string[] {
  const { state } = ledger;
  const problems: string[] = [];
  for (const holder of budgetHolders(state)) {
    const limited = POOLED.filter((kind) => holder.budget[kind] !== undefined);
    if (limited.length === 0) continue;
    const runs = poolRuns(state, holder);
    for (const kind of limited) {
      const key = `${keyOf(holder)}:${holder.since}:${JSON.stringify(holder.budget)}:${kind}`;
      const reach = ledger.reached.get(key);
      if (reach === undefined) {
        const spent = holderSpend(state, holder, now)[kind];
        if (spent < holder.budget[kind]!) continue;
        const running = new Set(runs.filter((runId) => {
          const run = state.runs.get(runId)!;
          return holdsTurn(state, run) && !isTerminalRunStatus(run.status);
        }));
        ledger.reached.set(key, { spent, running, frozen: new Map(runs.filter((runId) => !running.has(runId)).map((runId) => [runId, runSpend(state, runId, kind)])) });
        continue;
      }
      for (const runId of runs) {
        if (reach.running.has(runId) || state.runs.get(runId)?.kind === RunKind.systemFollowUp) continue;
        const added = runSpend(state, runId, kind) - (reach.frozen.get(runId) ?? 0);
        if (added <= 1e-9) continue;
        problems.push(`run ${runId} added ${added} ${kindName(kind)} to ${holder.label} after it reached its limit of ${holder.budget[kind]} at ${reach.spent}, though it was not running then`);
        reach.frozen.set(runId, runSpend(state, runId, kind));
      }
    }
  }
  return problems;
}

function kindName(kind: BudgetKind): string {
  return kind === "costUsd" ? "USD" : kind;
}
