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
  /** Set when the instance asked for (or inherited) was unavailable and a fallback or failover instance was taken instead. */
  readonly failedOver: { readonly fromProviderInstanceId: string; readonly reason: string } | null;
}

/** An instance to start on when the one asked for is unavailable (delegate_task's `target.fallbacks`). */
export interface FallbackRequest {
  readonly providerInstanceId: string;
  readonly model?: string;
}

export interface TargetRequest {
  readonly providerInstanceId?: string;
  readonly driverKind?: string;
  readonly model?: string;
  readonly fallbacks?: readonly FallbackRequest[];
}

/**
 * Provider and model for new work (spec 000, delegate_task): inherit the
 * caller's; a driver-only target keeps the caller's instance when it is of
 * that driver, else takes an available one; an explicit instance is honoured
 * exactly; another provider without a model takes its first advertised model.
 * When the instance asked for (or the inherited one) is unavailable, the
 * request's fallbacks are tried in order, then the instance's configured
 * `failover` list (docs/limits.md, "Failover"); with none available the
 * answer is provider_unavailable naming each one's reason.
 */
export async function resolveTarget(registry: ProviderRegistry, caller: ActingCaller, target: TargetRequest | undefined): Promise<ResolvedTarget> {
  const inheritedId = caller.thread?.modelSelection?.providerInstanceId ?? caller.thread?.providerInstanceId ?? caller.providerInstanceId;
  if (target?.providerInstanceId !== undefined) {
    const availability = await registry.get(target.providerInstanceId);
    if (availability === null) return unknownInstance(registry, target.providerInstanceId);
    if (availability.available) return { availability, providerInstanceId: availability.instance.id, model: modelFor(availability, target.model, inheritedId, caller), failedOver: null };
    return fallBack(registry, availability, target.fallbacks ?? [], null, availability.instance.id);
  }
  const all = await registry.list();
  const inherited = inheritedId === null ? undefined : all.find((p) => p.instance.id === inheritedId);
  let availability: ProviderAvailability | null;
  if (target?.driverKind !== undefined) {
    availability = inherited?.available === true && inherited.driver === target.driverKind ? inherited : (all.find((p) => p.available && p.driver === target.driverKind) ?? null);
    if (availability === null) {
      if ((target.fallbacks ?? []).length > 0) return fallBack(registry, null, target.fallbacks ?? [], `no available provider instance of driver ${target.driverKind}`, `any ${target.driverKind} instance`);
      fail("provider_unavailable", `no available provider instance of driver ${target.driverKind}`);
    }
  } else if (inherited !== undefined && !inherited.available && (target?.fallbacks !== undefined || (inherited.instance.failover ?? []).length > 0)) {
    return fallBack(registry, inherited, target?.fallbacks ?? [], null, inherited.instance.id, () => all.find((p) => p.available) ?? null);
  } else {
    availability = inherited?.available === true ? inherited : (all.find((p) => p.available) ?? null);
    if (availability === null) fail("provider_unavailable", "no provider instance is available");
  }
  return { availability, providerInstanceId: availability.instance.id, model: modelFor(availability, target?.model, inheritedId, caller), failedOver: null };
}

/**
 * The first available of the request's fallbacks, then of `wanted`'s
 * configured failover instances (then `last`, for an inherited instance that
 * may give way to any); provider_unavailable listing every reason when none is.
 */
async function fallBack(
  registry: ProviderRegistry,
  wanted: ProviderAvailability | null,
  fallbacks: readonly FallbackRequest[],
  wantedReason: string | null,
  from: string,
  last?: () => ProviderAvailability | null,
): Promise<ResolvedTarget> {
  const reason = wantedReason ?? `${from} is unavailable: ${wanted?.reason ?? "unknown reason"}`;
  const passed: string[] = [reason];
  const candidates: FallbackRequest[] = [...fallbacks, ...(wanted?.instance.failover ?? []).map((providerInstanceId) => ({ providerInstanceId }))];
  const seen = new Set<string>(wanted === null ? [] : [wanted.instance.id]);
  for (const candidate of candidates) {
    if (seen.has(candidate.providerInstanceId)) continue;
    seen.add(candidate.providerInstanceId);
    const availability = await registry.get(candidate.providerInstanceId);
    if (availability === null) return unknownInstance(registry, candidate.providerInstanceId);
    if (!availability.available) {
      passed.push(`${candidate.providerInstanceId} is unavailable: ${availability.reason ?? "unknown reason"}`);
      continue;
    }
    const model = modelFor(availability, candidate.model, null, null);
    return { availability, providerInstanceId: availability.instance.id, model, failedOver: { fromProviderInstanceId: from, reason: withoutInstance(reason, from) } };
  }
  const any = last?.() ?? null;
  if (any !== null) return { availability: any, providerInstanceId: any.instance.id, model: any.models[0] ?? null, failedOver: { fromProviderInstanceId: from, reason: withoutInstance(reason, from) } };
  return fail("provider_unavailable", passed.join("; "));
}

/** "x is unavailable: why" → "why", for a notice that already names x. */
function withoutInstance(reason: string, instanceId: string): string {
  const prefix = `${instanceId} is unavailable: `;
  return reason.startsWith(prefix) ? reason.slice(prefix.length) : reason;
}

/** The model asked for (any catalog model is accepted: current, legacy or one the user added; spec 000), the caller's on its own instance, else the instance's first. */
function modelFor(availability: ProviderAvailability, requested: string | undefined, inheritedId: string | null, caller: ActingCaller | null): string | null {
  if (requested !== undefined) {
    const accepted = [...availability.models, ...availability.legacyModels, ...availability.customModels];
    if (availability.models.length > 0 && !accepted.includes(requested)) {
      fail("model_unavailable", `${availability.instance.id} does not advertise model ${requested}; it offers ${availability.models.join(", ")}`);
    }
    return requested;
  }
  if (availability.instance.id === inheritedId && caller?.thread?.modelSelection?.model) return caller.thread.modelSelection.model;
  return availability.models[0] ?? null;
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
