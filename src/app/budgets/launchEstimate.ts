import type { BudgetKind, BudgetLimits } from "../../contracts/entities/budgets.js";
import type { EstimateGroup, LaunchEstimate } from "../../contracts/tools/launchEstimate.js";
import { ESTIMATE_SAMPLE_LIMIT, type EstimateKey, type Figures, historyEstimate, launchTotals } from "../../core/budgets/estimate.js";
import type { OrchestrationState } from "../../core/state.js";

/**
 * The answer of a dry run (docs/budgets.md, "Estimate before launch"): the
 * planned calls grouped by provider instance, model and role, each group
 * estimated from its history, and the launch's totals against the budget it
 * asked for.
 */

/** One agent call a launch would make: where it runs, in which round (calls of a round run together). */
export interface PlannedCall extends EstimateKey {
  readonly round: number;
}

export interface PlannedLaunch {
  readonly calls: readonly PlannedCall[];
  /** False when the calls are not all of the launch (its fan-out is not knowable): no totals then. */
  readonly complete: boolean;
  readonly budget: BudgetLimits | undefined;
  /** What the planner knows about its count, first in the notes. */
  readonly notes: readonly string[];
}

const keyText = (key: EstimateKey) => JSON.stringify([key.providerInstanceId, key.model, key.role]);
const describe = (key: EstimateKey) => `${key.providerInstanceId}${key.model === null ? "" : ` (${key.model})`}${key.role === null ? "" : `, role ${key.role}`}`;

export function launchEstimate(state: OrchestrationState, plan: PlannedLaunch): LaunchEstimate {
  const groups = new Map<string, EstimateGroup>();
  for (const call of plan.calls) {
    const text = keyText(call);
    const group = groups.get(text);
    if (group !== undefined) {
      groups.set(text, { ...group, calls: group.calls + 1 });
      continue;
    }
    const history = historyEstimate(state, call);
    groups.set(text, {
      providerInstanceId: call.providerInstanceId,
      model: call.model,
      role: call.role,
      calls: 1,
      sampleSize: history.sampleSize,
      perCall: { tokens: history.tokens, costUsd: history.costUsd, wallClockMs: history.wallClockMs },
    });
  }
  const byRound: Figures[][] = [];
  for (const call of plan.calls) (byRound[call.round] ??= []).push(groups.get(keyText(call))!.perCall);
  const rounds = byRound.filter((round) => round !== undefined);
  const unknown: Figures = { tokens: null, costUsd: null, wallClockMs: null };
  const total = plan.complete ? launchTotals(rounds) : unknown;
  const notes = [...plan.notes];
  notes.push(`Per-call figures are medians of up to ${ESTIMATE_SAMPLE_LIMIT} recent completed tasks of the same provider instance, model and role: tokens and cost of each task's whole subtree, wall-clock time from its creation to its result.`);
  for (const group of groups.values()) {
    if (group.sampleSize === 0) notes.push(`No completed task of ${describe(group)} is recorded yet: no estimate for its ${group.calls === 1 ? "call" : `${group.calls} calls`}.`);
    else if (group.perCall.costUsd === null) notes.push(`No task of ${describe(group)} reported or priced a cost: no cost estimate for it (prices in config.json give one).`);
  }
  return {
    dryRun: true,
    agentCalls: plan.complete ? plan.calls.length : null,
    rounds: plan.complete ? rounds.length : null,
    groups: [...groups.values()],
    total,
    exceedsBudget: plan.complete ? passedLimits(plan.budget, plan.calls.length, total) : [],
    notes,
  };
}

/** The requested budget's limits the launch would pass: every call is a spawn and at least one turn. */
function passedLimits(budget: BudgetLimits | undefined, calls: number, total: Figures): BudgetKind[] {
  if (budget === undefined) return [];
  const passed: BudgetKind[] = [];
  if (budget.spawns !== undefined && calls > budget.spawns) passed.push("spawns");
  if (budget.turns !== undefined && calls > budget.turns) passed.push("turns");
  if (budget.tokens !== undefined && total.tokens !== null && total.tokens > budget.tokens) passed.push("tokens");
  if (budget.costUsd !== undefined && total.costUsd !== null && total.costUsd > budget.costUsd) passed.push("costUsd");
  if (budget.wallClockMs !== undefined && total.wallClockMs !== null && total.wallClockMs > budget.wallClockMs) passed.push("wallClockMs");
  return passed;
}
