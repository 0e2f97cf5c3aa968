import type { ClientCommand } from "../../contracts/commands.js";
import type { ContextHandoff } from "../../contracts/entities/contextTransfers.js";
import { RUNTIME_MODES, type RuntimeMode, runtimeModeRank } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import type {
  HandoffView,
  ThreadConfigurationInput,
  ThreadConfigurationOutput,
  ThreadConfigureInput,
  ThreadConfigureOutput,
} from "../../contracts/tools/configurationTools.js";
import { estimateTokens, utf8Length } from "../../core/lineage/transcript.js";
import { threadProvider } from "../../core/run/lifecycle.js";
import { activeRunOf } from "../../engine/queries.js";
import type { ProviderAvailability } from "../../providers/registry.js";
import { type Caller, ceilingOf, resolveCaller } from "../caller.js";
import { type AppContext, execute, requestIds } from "../context.js";
import { AppError, fail } from "../errors.js";
import { failOverNow } from "../limits/failover.js";
import { availableProvider, refuseEscalation } from "../policy.js";
import { authorizeChange, liveThreadOrFail } from "./authorize.js";

/**
 * t3_thread_configuration and t3_thread_configure (spec 004 §3.5): a thread's
 * runtime mode, interaction mode, model and provider instance. A new provider
 * instance is provider.switch: the thread's next run goes there with a context
 * handoff of the runs it has not seen (src/core/lineage/switch.ts).
 */

export function handoffView(handoff: ContextHandoff): HandoffView {
  return {
    handoffId: handoff.id,
    strategy: handoff.strategy,
    status: handoff.status,
    fromProvider: handoff.sourceProviderInstanceId,
    toProvider: handoff.targetProviderInstanceId,
    coveredRunOrdinals: handoff.coveredRunOrdinals,
    bytes: handoff.summaryText === null ? null : utf8Length(handoff.summaryText),
    estimatedTokens: handoff.summaryText === null ? null : estimateTokens(handoff.summaryText),
    deliveredToRunId: handoff.delivery?.runId ?? null,
  };
}

async function configurationOf(ctx: AppContext, thread: AppThread): Promise<ThreadConfigurationOutput> {
  const state = ctx.orchestrator.state;
  const providerId = threadProvider(thread);
  const availability = providerId === null ? null : await ctx.registry.get(providerId);
  const capabilities = availability?.capabilities ?? null;
  const handoffIds = state.threadHandoffs.get(thread.id) ?? [];
  const newest = handoffIds.length === 0 ? undefined : state.handoffs.get(handoffIds[handoffIds.length - 1]!);
  return {
    threadId: thread.id,
    providerInstanceId: providerId,
    driver: availability?.driver ?? null,
    model: thread.modelSelection?.model ?? null,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    provider:
      availability === null
        ? null
        : {
            available: availability.available,
            reason: availability.reason,
            models: [...availability.models],
            runtimeModes: [...(capabilities?.runtimeModes ?? [])],
            steering: capabilities?.steering ?? false,
            interrupt: capabilities?.interrupt ?? false,
            fork: capabilities?.fork ?? false,
          },
    activeRunProviderInstanceId: activeRunOf(state, thread.id)?.providerInstanceId ?? null,
    handoff: newest === undefined ? null : handoffView(newest),
  };
}

/** t3_thread_configuration: the thread's modes, model and provider, what the provider offers, and its newest handoff. */
export async function threadConfiguration(ctx: AppContext, caller: Caller, input: ThreadConfigurationInput): Promise<ThreadConfigurationOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_configuration");
  const threadId = input.threadId ?? acting.thread?.id ?? fail("invalid_request", "threadId is required for a caller outside a thread");
  return configurationOf(ctx, liveThreadOrFail(ctx, threadId));
}

/** The runtime mode the thread will run with on `availability`: an explicit one must be offered; a kept one steps down to the broadest offered mode. */
function offeredRuntimeMode(availability: ProviderAvailability, current: RuntimeMode, requested: RuntimeMode | undefined): RuntimeMode {
  const offered = availability.capabilities?.runtimeModes ?? RUNTIME_MODES;
  if (requested !== undefined) {
    if (!offered.includes(requested)) fail("invalid_request", `${availability.instance.id} does not offer runtime mode ${requested}; it offers ${offered.join(", ")}`);
    return requested;
  }
  if (offered.includes(current)) return current;
  return [...offered].filter((mode) => runtimeModeRank(mode) <= runtimeModeRank(current)).sort((a, b) => runtimeModeRank(b) - runtimeModeRank(a))[0] ?? "approval-required";
}

/** Rejections that mean "already so": the field counts as unchanged, not as a failure. */
const UNCHANGED = new Set(["runtime_mode_unchanged", "interaction_mode_unchanged", "model_selection_unchanged", "provider_unchanged"]);

type Change = ThreadConfigureOutput["changed"][number];

/**
 * t3_thread_configure: change any of the modes, the model and the provider
 * instance. Everything is checked before anything changes: the caller has a
 * live run, the provider is available, the model advertised, the runtime
 * mode offered, and the decider's privilege ceiling allows every command (the
 * target is no broader than the caller, and new modes are not broader than
 * the caller's: an agent may narrow its own thread, never widen it). Each
 * field is then one command; a field that already has the value is left as
 * is. With a clientRequestId the command ids are derived, so a retry
 * replays the same receipts and answers the same `changed`.
 */
export async function configureThread(ctx: AppContext, caller: Caller, input: ThreadConfigureInput): Promise<ThreadConfigureOutput> {
  if (input.failOver === true) return switchNow(ctx, caller, input);
  if (input.providerInstanceId === undefined && input.model === undefined && input.runtimeMode === undefined && input.interactionMode === undefined) {
    fail("invalid_request", "nothing to configure: pass providerInstanceId, model, runtimeMode or interactionMode");
  }
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_configure");
  // A new provider for a thread waiting on a usage limit takes its work at once.
  if (input.providerInstanceId !== undefined && (target.limitRecovery ?? null) !== null) return switchNow(ctx, caller, input);
  const current = threadProvider(target);
  const providerId = input.providerInstanceId ?? current;
  let model: string | null = target.modelSelection?.model ?? null;
  let runtimeMode: RuntimeMode | undefined = input.runtimeMode;
  if (providerId !== null && (input.providerInstanceId !== undefined || input.model !== undefined)) {
    // A new provider or model must be usable now.
    const availability = await availableProvider(ctx.registry, providerId);
    if (input.model !== undefined) {
      if (availability.models.length > 0 && !availability.models.includes(input.model)) {
        fail("model_unavailable", `${providerId} does not advertise model ${input.model}; it offers ${availability.models.join(", ")}`);
      }
      model = input.model;
    } else if (providerId !== current) {
      model = availability.models[0] ?? null;
    }
    const mode = offeredRuntimeMode(availability, target.runtimeMode, input.runtimeMode);
    if (mode !== target.runtimeMode) runtimeMode = mode;
  } else if (providerId !== null && input.runtimeMode !== undefined) {
    // A mode change alone works while the provider is down; its capability record still says what it offers.
    const availability = await ctx.registry.get(providerId);
    if (availability !== null) offeredRuntimeMode(availability, target.runtimeMode, input.runtimeMode);
  } else if (providerId === null && input.model !== undefined) {
    fail("invalid_request", `thread ${target.id} has no provider instance; pass providerInstanceId with the model`);
  }

  const ids = requestIds(acting, `t3_thread_configure:${target.id}`, input.clientRequestId);
  const planned: { change: Change; command: ClientCommand }[] = [];
  const threadId = target.id;
  const ceiling = ceilingOf(acting);
  if (runtimeMode !== undefined) {
    planned.push({ change: "runtimeMode", command: { type: "thread.runtime-mode.set", commandId: ids.command("runtime-mode"), data: { threadId, runtimeMode, ceiling } } });
  }
  if (input.interactionMode !== undefined) {
    planned.push({
      change: "interactionMode",
      command: { type: "thread.interaction-mode.set", commandId: ids.command("interaction-mode"), data: { threadId, interactionMode: input.interactionMode, ceiling } },
    });
  }
  const selectModel = (provider: string): { change: Change; command: ClientCommand } => ({
    change: "model",
    command: { type: "thread.model-selection.set", commandId: ids.command("model"), data: { threadId, modelSelection: { providerInstanceId: provider, model }, ceiling } },
  });
  if (input.providerInstanceId !== undefined) {
    planned.push({ change: "provider", command: { type: "provider.switch", commandId: ids.command("provider"), data: { threadId, providerInstanceId: input.providerInstanceId, model, ceiling } } });
  } else if (input.model !== undefined && current !== null) {
    planned.push(selectModel(current));
  }
  refuseEscalation(ctx.orchestrator.state, planned.map((step) => step.command));

  const changed: Change[] = [];
  const commandIds: string[] = [];
  let sequence: number | null = null;
  for (const step of planned) {
    try {
      const executed = await execute(ctx, step.command);
      changed.push(step.change);
      commandIds.push(executed.receipt.commandId);
      sequence = executed.receipt.sequence;
    } catch (error) {
      if (!(error instanceof AppError) || !UNCHANGED.has(error.rejectionCode ?? "")) throw error;
      // The same provider: only the model may still change.
      if (step.change === "provider" && input.model !== undefined) planned.push(selectModel(input.providerInstanceId!));
    }
  }
  const after = liveThreadOrFail(ctx, target.id);
  return { ...(await configurationOf(ctx, after)), changed, commandIds, sequence };
}

/**
 * Switch now (docs/limits.md, "Failover"): a thread waiting on a usage
 * limit moves to the instance named, or its first available failover
 * instance, and its work goes on there. Only the thread and the instance
 * may be given: the model is the instance's first (or the delegation's
 * fallback model), the modes stay the thread's.
 */
async function switchNow(ctx: AppContext, caller: Caller, input: ThreadConfigureInput): Promise<ThreadConfigureOutput> {
  if (input.model !== undefined || input.runtimeMode !== undefined || input.interactionMode !== undefined) {
    fail("invalid_request", "switching a thread that waits on a usage limit takes only threadId and providerInstanceId; change its model or modes afterwards");
  }
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_configure");
  const moved = await failOverNow(ctx, target, input.providerInstanceId, ceilingOf(acting));
  return { ...(await configurationOf(ctx, liveThreadOrFail(ctx, target.id))), changed: ["provider"], commandIds: [moved.commandId], sequence: moved.sequence };
}
