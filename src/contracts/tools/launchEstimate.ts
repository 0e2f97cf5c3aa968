import { z } from "zod";
import { BudgetKind } from "../entities/budgets.js";
import { DelegatedTaskRoleSchema } from "../entities/delegatedTasks.js";

/**
 * What `dryRun: true` on delegate_task and t3_workflow_start answers
 * (docs/budgets.md, "Estimate before launch"): nothing is started; the
 * agent calls the launch would make and what they are likely to spend,
 * from the recorded history of the same provider instance, model and role.
 * A figure without history is null, never made up.
 */

const FiguresSchema = z.object({
  tokens: z.number().nonnegative().nullable().describe("Input plus output tokens; null without history"),
  costUsd: z.number().nonnegative().nullable().describe("US dollars; null without history of a reported or priced cost"),
  wallClockMs: z.number().nonnegative().nullable().describe("Milliseconds until the result; null without history"),
});

const EstimateGroupSchema = z.object({
  providerInstanceId: z.string(),
  model: z.string().nullable().describe("null: the provider's default model"),
  role: DelegatedTaskRoleSchema.nullable(),
  calls: z.number().int().nonnegative().describe("Agent calls of the launch with this provider instance, model and role"),
  sampleSize: z.number().int().nonnegative().describe("Completed earlier tasks the medians come from; 0: no history"),
  perCall: FiguresSchema.describe("Medians of those tasks"),
});

export const LaunchEstimateSchema = z.object({
  dryRun: z.literal(true),
  agentCalls: z.number().int().nonnegative().nullable().describe("Agent calls the launch makes; null when the script's fan-out is not knowable"),
  rounds: z.number().int().nonnegative().nullable().describe("Waves of calls that run together; wall-clock time adds up over them"),
  groups: z.array(EstimateGroupSchema),
  total: FiguresSchema.describe("Tokens and cost over every call, wall-clock time over the rounds; null when any call lacks the figure"),
  exceedsBudget: z.array(z.enum(BudgetKind)).describe("Limits of the requested budget the estimate passes"),
  notes: z.array(z.string()).describe("How the figures were reached, and what they cannot know"),
});
export type LaunchEstimate = z.infer<typeof LaunchEstimateSchema>;
export type EstimateGroup = z.infer<typeof EstimateGroupSchema>;

export const DRY_RUN_DESCRIPTION = "true: start nothing; answer with the agent calls this would make and an estimate of their tokens, cost and wall-clock time from the recorded history of the same provider instance, model and role";
