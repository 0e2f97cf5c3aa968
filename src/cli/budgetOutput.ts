import type { BudgetExceeded, BudgetLimits, BudgetRemaining, BudgetSpend } from "../contracts/entities/budgets.js";

/** A budget as task_status and t3_thread_read answer it (docs/budgets.md, "Reads"). */
export interface BudgetView {
  readonly limits: BudgetLimits;
  readonly spent: BudgetSpend;
  readonly remaining: BudgetRemaining;
  readonly reached: readonly string[];
  readonly exceeded: BudgetExceeded | null;
  /** The tree waits for a raise (onExceeded pause); absent in views of older servers. */
  readonly paused?: boolean;
}

const KINDS = ["tokens", "turns", "spawns", "costUsd", "wallClockMs"] as const;

function amount(kind: (typeof KINDS)[number], value: number): string {
  if (kind === "costUsd") return `$${value.toFixed(value < 1 ? 4 : 2)}`;
  if (kind === "wallClockMs") return `${(value / 1000).toFixed(1)} s`;
  return value.toLocaleString("en-US");
}

const NAMES: Readonly<Record<(typeof KINDS)[number], string>> = { tokens: "tokens", turns: "turns", spawns: "spawns", costUsd: "cost", wallClockMs: "time" };

/**
 * One line per limited kind, spend against limit and what is left, with the
 * kinds already reached marked; then how it ran out, when it did. The same
 * view MCP answers, for `loom tasks status` and `loom threads read`.
 */
export function formatBudget(budget: BudgetView): string[] {
  const lines = ["budget:"];
  for (const kind of KINDS) {
    const limit = budget.limits[kind];
    if (limit === undefined) continue;
    const left = budget.remaining[kind] ?? 0;
    const mark = budget.reached.includes(kind) ? " (reached: nothing new starts)" : "";
    lines.push(`  ${NAMES[kind]}: ${amount(kind, budget.spent[kind])} of ${amount(kind, limit)}, ${amount(kind, left)} left${mark}`);
  }
  const exceeded = budget.exceeded;
  if (exceeded !== null) lines.push(`  ran out of ${NAMES[exceeded.kind]} at ${exceeded.at} (${amount(exceeded.kind, exceeded.spent)} of ${amount(exceeded.kind, exceeded.limit)}; ${exceeded.policy})`);
  if (budget.paused === true) lines.push("  paused on budget: queued work waits until the limit is raised (loom budget raise)");
  return lines;
}
