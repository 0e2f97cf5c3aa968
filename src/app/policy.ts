import type { Command } from "../contracts/commands.js";
import { type InteractionMode, RUNTIME_MODES, type RuntimeMode, runtimeModeRank } from "../contracts/modes.js";
import { ceilingRejection } from "../core/policy/ceiling.js";
import type { OrchestrationState } from "../core/state.js";
import type { ProviderAvailability, ProviderRegistry } from "../providers/registry.js";
import type { ActingCaller } from "./caller.js";
import { errorOfRejection, fail } from "./errors.js";

/**
 * For a request sent as several commands (create_threads,
 * t3_thread_configure) or one that makes something before its first command
 * (t3_thread_launch's scratch folder): the decider's privilege ceiling
 * (src/core/policy/ceiling.ts) asked of each command before the first is
 * sent, so a request refused part-way writes nothing. The decider holds each
 * command to it again when it decides it; that check is the one that binds.
 */
export function refuseEscalation(state: OrchestrationState, commands: readonly Command[]): void {
  for (const command of commands) {
    const refused = ceilingRejection(state, command);
    if (refused !== null) throw errorOfRejection(refused.rejection);
  }
}

/** provider_unavailable for an instance id the config does not name, listing the ids it does. */
async function unknownInstance(registry: ProviderRegistry, providerInstanceId: string): Promise<never> {
  const ids = (await registry.list()).map((p) => p.instance.id);
  fail("provider_unavailable", `no provider instance named ${providerInstanceId}; the instances are ${ids.length === 0 ? "(none configured)" : ids.join(", ")}`);
}

/** An enabled, installed, authenticated instance with an adapter, or provider_unavailable saying why not. */
export async function availableProvider(registry: ProviderRegistry, providerInstanceId: string): Promise<ProviderAvailability> {
  const availability = await registry.get(providerInstanceId);
  if (availability === null) return unknownInstance(registry, providerInstanceId);
  if (!availability.available) fail("provider_unavailable", `${providerInstanceId} is unavailable: ${availability.reason ?? "unknown reason"}`);
  return availability;
}

export interface ResolvedTarget {
  readonly availability: ProviderAvailability;
  readonly providerInstanceId: string;
  readonly model: string | null;
}

export interface TargetRequest {
  readonly providerInstanceId?: string;
  readonly driverKind?: string;
  readonly model?: string;
}

/**
 * Provider and model for new work (spec 000, delegate_task): inherit the
 * caller's; a driver-only target keeps the caller's instance when it is of
 * that driver, else takes an available one; an explicit instance is honoured
 * exactly; another provider without a model takes its first advertised model.
 */
export async function resolveTarget(registry: ProviderRegistry, caller: ActingCaller, target: TargetRequest | undefined): Promise<ResolvedTarget> {
  const inheritedId = caller.thread?.modelSelection?.providerInstanceId ?? caller.thread?.providerInstanceId ?? caller.providerInstanceId;
  let availability: ProviderAvailability | null = null;
  if (target?.providerInstanceId !== undefined) {
    availability = await registry.get(target.providerInstanceId);
    if (availability === null) return unknownInstance(registry, target.providerInstanceId);
    if (!availability.available) fail("provider_unavailable", `${target.providerInstanceId} is unavailable: ${availability.reason ?? "unknown reason"}`);
  } else {
    const all = await registry.list();
    const inherited = inheritedId === null ? undefined : all.find((p) => p.instance.id === inheritedId);
    if (target?.driverKind !== undefined) {
      availability =
        inherited?.available === true && inherited.driver === target.driverKind ? inherited : (all.find((p) => p.available && p.driver === target.driverKind) ?? null);
      if (availability === null) fail("provider_unavailable", `no available provider instance of driver ${target.driverKind}`);
    } else {
      availability = inherited?.available === true ? inherited : (all.find((p) => p.available) ?? null);
      if (availability === null) fail("provider_unavailable", "no provider instance is available");
    }
  }
  const sameProvider = availability.instance.id === inheritedId;
  let model: string | null;
  if (target?.model !== undefined) {
    // Any catalog model is accepted: current, legacy or one the user added (spec 000).
    const accepted = [...availability.models, ...availability.legacyModels, ...availability.customModels];
    if (availability.models.length > 0 && !accepted.includes(target.model)) {
      fail("model_unavailable", `${availability.instance.id} does not advertise model ${target.model}; it offers ${availability.models.join(", ")}`);
    }
    model = target.model;
  } else if (sameProvider && caller.thread?.modelSelection?.model) {
    model = caller.thread.modelSelection.model;
  } else {
    model = availability.models[0] ?? null;
  }
  return { availability, providerInstanceId: availability.instance.id, model };
}

/**
 * Modes for new work: a mode the provider does not offer is refused when
 * explicit; inherited modes are the caller's, the runtime mode stepped down
 * to the broadest the provider offers. An explicit mode broader than the
 * caller's is passed on: the decider refuses it (the privilege ceiling).
 */
export function resolveModes(
  caller: ActingCaller,
  availability: ProviderAvailability,
  requested: { runtimeMode?: RuntimeMode | "inherit"; interactionMode?: InteractionMode | "inherit" },
): { runtimeMode: RuntimeMode; interactionMode: InteractionMode } {
  const offered = availability.capabilities?.runtimeModes ?? RUNTIME_MODES;
  const base: RuntimeMode = caller.thread?.runtimeMode ?? "full-access";
  let runtimeMode: RuntimeMode;
  if (requested.runtimeMode !== undefined && requested.runtimeMode !== "inherit") {
    runtimeMode = requested.runtimeMode;
    if (!offered.includes(runtimeMode)) {
      fail("invalid_request", `${availability.instance.id} does not offer runtime mode ${runtimeMode}; it offers ${offered.join(", ")}`);
    }
  } else {
    const allowed = offered.filter((mode) => runtimeModeRank(mode) <= runtimeModeRank(base));
    runtimeMode = allowed.sort((a, b) => runtimeModeRank(b) - runtimeModeRank(a))[0] ?? "approval-required";
  }
  const interactionMode: InteractionMode =
    requested.interactionMode !== undefined && requested.interactionMode !== "inherit" ? requested.interactionMode : (caller.thread?.interactionMode ?? "default");
  return { runtimeMode, interactionMode };
}
