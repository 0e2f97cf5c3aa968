import type { InitializeResponse, NewSessionResponse, SessionConfigOption } from "@agentclientprotocol/sdk/unstable";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES } from "../../contracts/modes.js";

/**
 * The capability record of an ACP instance comes only from what the agent
 * advertised (spec 000, "ACP Registry V2"): `initialize` tells load (→
 * resume), fork and the MCP transports; a `session/new` answer tells models
 * and modes. ACP has no active steering, so steering is always false and
 * restart (interrupt, then send again) true; session/cancel is part of the
 * base protocol, so interrupt is true. Until an agent was seen, nothing else
 * is claimed: no resume, no models, no MCP transport. Fork is never claimed:
 * the adapter contract has no fork entry point, so Loom forks every ACP
 * thread with portable context, whatever the agent advertises (as for codex
 * and claude); the advertised fact is kept for `AcpSession.forkNative`.
 */

export interface AdvertisedFacts {
  readonly loadSession: boolean;
  readonly fork: boolean;
  readonly mcpHttp: boolean;
  /** Model ids from session/new (`models.availableModels`, or a config option of category "model"). */
  readonly models: readonly string[];
  /** Session mode ids from session/new (`modes.availableModes`). */
  readonly modes: readonly string[];
  readonly authMethods: readonly string[];
  /** The agent's name and version from initialize, for messages. */
  readonly agent: string | null;
}

export const NOTHING_ADVERTISED: AdvertisedFacts = { loadSession: false, fork: false, mcpHttp: false, models: [], modes: [], authMethods: [], agent: null };

/** What `initialize` advertises. */
export function factsFromInitialize(response: InitializeResponse): AdvertisedFacts {
  const caps = response.agentCapabilities;
  const info = response.agentInfo;
  return {
    loadSession: caps?.loadSession === true,
    fork: caps?.sessionCapabilities?.fork != null,
    mcpHttp: caps?.mcpCapabilities?.http === true,
    models: [],
    modes: [],
    authMethods: (response.authMethods ?? []).map((method) => method.id),
    agent: info == null ? null : `${info.name}${info.version === "" ? "" : ` ${info.version}`}`,
  };
}

/** Adds what a session/new (or load, fork) answer advertises. */
export function withSessionFacts(facts: AdvertisedFacts, response: NewSessionResponse): AdvertisedFacts {
  return { ...facts, models: advertisedModels(response), modes: (response.modes?.availableModes ?? []).map((mode) => mode.id) };
}

/**
 * Model ids: the legacy `models` state some agents still send (Claude Code
 * ACP, Gemini CLI), else the values of a select config option of category
 * "model" (the current protocol).
 */
export function advertisedModels(response: NewSessionResponse): string[] {
  const legacy = (response as { models?: { availableModels?: readonly { modelId?: unknown }[] } }).models?.availableModels;
  if (legacy !== undefined) return legacy.flatMap((model) => (typeof model.modelId === "string" ? [model.modelId] : []));
  const option = modelOption(response.configOptions ?? []);
  return option === null ? [] : option.values;
}

/** The config option that selects the model, with its values. */
export function modelOption(options: readonly SessionConfigOption[]): { readonly id: string; readonly values: string[] } | null {
  for (const option of options) {
    if (option.category !== "model" || option.type !== "select") continue;
    const values = option.options.flatMap((entry) => ("group" in entry ? entry.options.map((inner) => inner.value) : [entry.value]));
    return { id: option.id, values };
  }
  return null;
}

export function capabilitiesFrom(facts: AdvertisedFacts, configuredModels: readonly string[] | null): ProviderCapabilities {
  return {
    steering: false,
    interrupt: true,
    restart: true,
    fork: false,
    resume: facts.loadSession,
    runtimeModes: RUNTIME_MODES,
    models: configuredModels ?? facts.models,
    mcpTransport: facts.mcpHttp ? "http" : "none",
  };
}

/**
 * Advertised facts by instance, filled by probes and opened sessions, read by
 * the pure capabilities() of the driver. A changed command (another agent)
 * starts from nothing again.
 */
export class AdvertisedFactsCache {
  private readonly entries = new Map<string, { readonly launch: string; readonly facts: AdvertisedFacts }>();

  get(instanceId: string, launch: string): AdvertisedFacts {
    const entry = this.entries.get(instanceId);
    return entry !== undefined && entry.launch === launch ? entry.facts : NOTHING_ADVERTISED;
  }

  set(instanceId: string, launch: string, facts: AdvertisedFacts): void {
    this.entries.set(instanceId, { launch, facts });
  }
}
