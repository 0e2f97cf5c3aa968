import { z } from "zod";

/**
 * Tree-wide budgets (docs/budgets.md): limits on what a delegated task's whole
 * subtree may spend. Every limit is optional; a task inherits its ancestors'
 * limits and may only narrow them.
 */
/** An ISO time (as the thread's IsoTimeSchema; defined here so the thread entity can carry a budget). */
const IsoTimeSchema = z.string().min(1);

export const BudgetKind = {
  tokens: "tokens",
  turns: "turns",
  wallClockMs: "wallClockMs",
  spawns: "spawns",
  costUsd: "costUsd",
} as const;
export type BudgetKind = (typeof BudgetKind)[keyof typeof BudgetKind];
export const BUDGET_KINDS: readonly BudgetKind[] = Object.values(BudgetKind);

/**
 * What happens to running work when a budget runs out: stopped at once,
 * allowed to finish its current turn, or paused (the current turns finish,
 * queued turns and workflow agent() calls wait, and a raise resumes them).
 */
export const BudgetPolicy = {
  stop: "stop",
  finishTurn: "finish_turn",
  pause: "pause",
} as const;
export type BudgetPolicy = (typeof BudgetPolicy)[keyof typeof BudgetPolicy];

export const BudgetLimitsSchema = z
  .object({
    tokens: z.number().int().positive().max(1e12).optional().describe("Input plus output tokens of every run in the subtree, as providers report them"),
    turns: z.number().int().positive().max(1_000_000).optional().describe("Runs started in the subtree"),
    wallClockMs: z.number().int().positive().max(30 * 24 * 3_600_000).optional().describe("Milliseconds since the task was created"),
    spawns: z.number().int().nonnegative().max(100_000).optional().describe("Tasks delegated anywhere in the subtree"),
    costUsd: z.number().positive().max(1e6).optional().describe("Cost where providers report it"),
    onExceeded: z.enum(BudgetPolicy).optional().describe("stop (default): running work is stopped; finish_turn: the current turns finish, nothing new starts; pause: as finish_turn, and queued work waits for t3_budget_raise"),
  })
  .strict();
export type BudgetLimits = z.infer<typeof BudgetLimitsSchema>;

/** What a subtree has spent, in the same units as the limits. */
export const BudgetSpendSchema = z.object({
  tokens: z.number().int().nonnegative(),
  turns: z.number().int().nonnegative(),
  wallClockMs: z.number().int().nonnegative(),
  spawns: z.number().int().nonnegative(),
  costUsd: z.number().nonnegative(),
});
export type BudgetSpend = z.infer<typeof BudgetSpendSchema>;

/** What is left of each limit (limit minus spend, never below 0), for the kinds the budget limits. */
export const BudgetRemainingSchema = z.object({
  tokens: z.number().nonnegative().optional(),
  turns: z.number().nonnegative().optional(),
  wallClockMs: z.number().nonnegative().optional(),
  spawns: z.number().nonnegative().optional(),
  costUsd: z.number().nonnegative().optional(),
});
export type BudgetRemaining = z.infer<typeof BudgetRemainingSchema>;

/** Every limit reached now (nothing new of any kind starts under it), in table order. */
export const BudgetReachedSchema = z.array(z.enum(BudgetKind));

/** Recorded once on the task whose budget ran out. */
export const BudgetExceededSchema = z.object({
  kind: z.enum(BudgetKind),
  limit: z.number(),
  spent: z.number(),
  policy: z.enum(BudgetPolicy),
  at: IsoTimeSchema,
});
export type BudgetExceeded = z.infer<typeof BudgetExceededSchema>;

/** A root thread's budget (docs/budgets.md, Root threads): its limits, when they were set (wall-clock time counts from then), and the limit that ran out. */
export const ThreadBudgetSchema = z.object({
  limits: BudgetLimitsSchema,
  since: IsoTimeSchema,
  exceeded: BudgetExceededSchema.nullable(),
});
export type ThreadBudget = z.infer<typeof ThreadBudgetSchema>;

/**
 * A model's price in US dollars per million tokens (config.json
 * `providers[].prices`, docs/budgets.md "Cost"): what a run's cost is
 * computed from when its provider reports tokens but no cost.
 */
export const ModelPriceSchema = z.strictObject({
  inputPerMTok: z.number({ error: "must be a number" }).nonnegative({ error: "must be at least 0" }).max(100_000, { error: "must be at most 100000" }),
  outputPerMTok: z.number({ error: "must be a number" }).nonnegative({ error: "must be at least 0" }).max(100_000, { error: "must be at most 100000" }),
  /** Cache reads; the input price when absent. */
  cachedInputPerMTok: z.number({ error: "must be a number" }).nonnegative({ error: "must be at least 0" }).max(100_000, { error: "must be at most 100000" }).optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;
