import type { DelegatedTaskRole } from "../../contracts/entities/delegatedTasks.js";
import type { OrchestrationState } from "../state.js";
import { treeThreads } from "./budgets.js";

/**
 * Launch estimates from recorded history (docs/budgets.md, "Estimate before
 * launch"), pure: what earlier delegated tasks of the same provider
 * instance, model and role spent, as medians with their sample size. A task's
 * figures are what its budget would have charged it: the tokens and cost of
 * every run in its subtree, and the wall-clock time from its creation to the
 * end of its first run (when its result arrived). No history gives no figure.
 */

export interface EstimateKey {
  readonly providerInstanceId: string;
  /** The model the task runs with; null for the provider's default. */
  readonly model: string | null;
  readonly role: DelegatedTaskRole | null;
}

export interface Figures {
  readonly tokens: number | null;
  readonly costUsd: number | null;
  readonly wallClockMs: number | null;
}

export interface HistoryEstimate extends Figures {
  /** How many completed tasks the medians come from; 0 means no figure. */
  readonly sampleSize: number;
}

/** The most recent tasks an estimate reads: recent work speaks for the provider as it is now. */
export const ESTIMATE_SAMPLE_LIMIT = 50;

interface TaskFigures {
  readonly createdAt: string;
  readonly tokens: number;
  /** Null when no run of the task reported or priced a cost. */
  readonly costUsd: number | null;
  readonly wallClockMs: number;
}

/** Every completed task of `key` whose first run ended, newest first, at most ESTIMATE_SAMPLE_LIMIT. */
function sampleOf(state: OrchestrationState, key: EstimateKey): TaskFigures[] {
  const sample: TaskFigures[] = [];
  for (const task of state.tasks.values()) {
    if (task.status !== "completed" || task.providerInstanceId !== key.providerInstanceId || task.model !== key.model || task.role !== key.role) continue;
    const first = task.childRunId === null ? undefined : state.runs.get(task.childRunId);
    if (first?.endedAt === null || first?.endedAt === undefined) continue;
    let tokens = 0;
    let costUsd: number | null = null;
    for (const threadId of treeThreads(state, task.childThreadId)) {
      for (const runId of state.threadRuns.get(threadId) ?? []) {
        for (const attemptId of state.runAttempts.get(runId) ?? []) {
          const usage = state.attempts.get(attemptId)?.usage;
          if (usage === undefined || usage === null) continue;
          tokens += usage.inputTokens + usage.outputTokens;
          if (usage.costUsd !== null) costUsd = (costUsd ?? 0) + usage.costUsd;
        }
      }
    }
    sample.push({ createdAt: task.createdAt, tokens, costUsd, wallClockMs: Math.max(0, Date.parse(first.endedAt) - Date.parse(task.createdAt)) });
  }
  sample.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  return sample.slice(0, ESTIMATE_SAMPLE_LIMIT);
}

/** The median of a non-empty list (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One task of `key`, estimated from the medians of its recorded history; every figure null without one. */
export function historyEstimate(state: OrchestrationState, key: EstimateKey): HistoryEstimate {
  const sample = sampleOf(state, key);
  if (sample.length === 0) return { sampleSize: 0, tokens: null, costUsd: null, wallClockMs: null };
  const costs = sample.flatMap((task) => (task.costUsd === null ? [] : [task.costUsd]));
  return {
    sampleSize: sample.length,
    tokens: median(sample.map((task) => task.tokens)),
    // A cost only from tasks that had one; none of them: no cost figure rather than $0.
    costUsd: costs.length === 0 ? null : median(costs),
    wallClockMs: median(sample.map((task) => task.wallClockMs)),
  };
}

/**
 * A launch's totals from per-call estimates: tokens and cost add up over
 * every call; wall-clock time adds up over rounds, a round taking as long as
 * its slowest call (calls of one round run in parallel). A figure any call
 * lacks is null in the total: an unknown part makes an unknown whole.
 */
export function launchTotals(rounds: readonly (readonly Figures[])[]): Figures {
  let tokens: number | null = 0;
  let costUsd: number | null = 0;
  let wallClockMs: number | null = 0;
  for (const round of rounds) {
    let slowest: number | null = 0;
    for (const call of round) {
      tokens = tokens === null || call.tokens === null ? null : tokens + call.tokens;
      costUsd = costUsd === null || call.costUsd === null ? null : costUsd + call.costUsd;
      slowest = slowest === null || call.wallClockMs === null ? null : Math.max(slowest, call.wallClockMs);
    }
    wallClockMs = wallClockMs === null || slowest === null ? null : wallClockMs + slowest;
  }
  return { tokens, costUsd, wallClockMs };
}
