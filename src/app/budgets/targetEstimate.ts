import { z } from "zod";
import { DelegatedTaskRoleSchema } from "../../contracts/entities/delegatedTasks.js";
import type { LaunchEstimate } from "../../contracts/tools/launchEstimate.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { availableProvider } from "../policy.js";
import { launchEstimate } from "./launchEstimate.js";

/** What the web UI asks before it starts work on a provider: the instance, the model (absent: its default) and the role. */
export const TargetEstimateInput = z
  .object({
    providerInstanceId: z.string().min(1).max(200),
    model: z.string().min(1).max(200).optional(),
    role: DelegatedTaskRoleSchema.optional(),
  })
  .strict();
export type TargetEstimateInput = z.infer<typeof TargetEstimateInput>;

/**
 * One piece of work on a provider, estimated from the recorded history of
 * the same instance, model and role (docs/budgets.md, "Estimate before
 * launch"), for the web UI's launch forms: the same estimate a dry run of
 * delegate_task gives, without a calling thread.
 */
export async function estimateTarget(ctx: AppContext, _caller: Caller, raw: unknown): Promise<LaunchEstimate> {
  const parsed = TargetEstimateInput.safeParse(raw);
  if (!parsed.success) fail("invalid_request", `an estimate needs { providerInstanceId, model?, role? }: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "query"}: ${issue.message}`).join("; ")}`);
  const input = parsed.data;
  const availability = await availableProvider(ctx.registry, input.providerInstanceId);
  // No model: the provider's default, as delegate_task picks it.
  const model = input.model ?? availability.models[0] ?? null;
  return launchEstimate(ctx.orchestrator.state, {
    calls: [{ providerInstanceId: input.providerInstanceId, model, role: input.role ?? null, round: 0 }],
    complete: true,
    budget: undefined,
    notes: [],
  });
}
