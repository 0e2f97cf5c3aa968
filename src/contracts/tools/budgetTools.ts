import { z } from "zod";
import { BudgetLimitsSchema, BudgetReachedSchema, BudgetRemainingSchema, BudgetSpendSchema } from "../entities/budgets.js";

/** t3_budget_raise (docs/budgets.md, "Pause and raise"): higher limits for one budget, named by exactly one of its holders. */
export const BudgetRaiseInput = z
  .object({
    taskId: z.string().min(1).max(512).optional(),
    threadId: z.string().min(1).max(512).optional().describe("A root thread (owner only)"),
    workflowId: z.string().min(1).max(512).optional(),
    limits: BudgetLimitsSchema,
  })
  .strict();
export type BudgetRaiseInput = z.infer<typeof BudgetRaiseInput>;

export const BudgetRaiseOutput = z.object({
  holder: z.object({ kind: z.enum(["task", "thread", "workflow"]), id: z.string() }),
  limits: BudgetLimitsSchema,
  spent: BudgetSpendSchema,
  remaining: BudgetRemainingSchema,
  reached: BudgetReachedSchema,
  /** Whether work under it still waits: the raise left a limit reached under a pausing budget. */
  paused: z.boolean(),
});
export type BudgetRaiseOutput = z.infer<typeof BudgetRaiseOutput>;
