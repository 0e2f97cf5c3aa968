import type { CapabilitiesInput, CapabilitiesOutput } from "../../contracts/tools/threadTools.js";
import type { ProviderAvailability } from "../../providers/registry.js";
import { type Caller, resolveCaller } from "../caller.js";
import type { AppContext } from "../context.js";

/** Current models listed per provider whose catalog is not curated (spec 000). */
export const LISTED_MODELS = 8;
/** Most models a search lists per provider. */
export const SEARCHED_MODELS = 50;

type ProviderView = CapabilitiesOutput["providers"][number];

/** Unique values, in first-seen order. */
function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * A provider's model list, short on purpose (every call lands in the
 * agent's context): the user's custom and favorite models and the caller's
 * own model first, then every current model of a curated catalog or the
 * first 8 current models in the user's order. Legacy models appear only to a
 * search, which finds any model by name; omittedModels counts the rest.
 */
export function modelList(provider: ProviderAvailability, callerModel: string | null, search: string | undefined): { models: string[]; omittedModels: number } {
  const legacy = new Set(provider.legacyModels);
  const current = provider.models.filter((model) => !legacy.has(model));
  const first = unique([...provider.customModels, ...provider.favoriteModels, ...(callerModel === null ? [] : [callerModel])]);
  const catalog = unique([...first, ...current, ...provider.legacyModels]);
  if (search !== undefined) {
    const needle = search.toLowerCase();
    const found = catalog.filter((model) => model.toLowerCase().includes(needle)).slice(0, SEARCHED_MODELS);
    return { models: found, omittedModels: catalog.length - found.length };
  }
  const listedCurrent = provider.capabilities?.curatedModels === true ? current : current.slice(0, LISTED_MODELS);
  const models = unique([...first, ...listedCurrent]);
  return { models, omittedModels: catalog.length - models.length };
}

/** orchestrator_capabilities: what the caller inherits and which providers can run work, with their models. */
export async function capabilities(ctx: AppContext, caller: Caller, input: CapabilitiesInput = {}): Promise<CapabilitiesOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "orchestrator_capabilities");
  const providers = await ctx.registry.list();
  const thread = acting.thread;
  const inheritedProvider = thread === null ? null : (thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId);
  const inheritedModel = thread?.modelSelection?.model ?? null;
  return {
    inherited: thread === null ? null : { providerInstanceId: inheritedProvider, model: inheritedModel },
    runtimeMode: thread?.runtimeMode ?? null,
    interactionMode: thread?.interactionMode ?? null,
    providers: providers.map((p): ProviderView => {
      const offered = p.capabilities?.runtimeModes ?? [];
      const listed = modelList(p, p.instance.id === inheritedProvider ? inheritedModel : null, input.search);
      return {
        providerInstanceId: p.instance.id,
        driver: p.driver,
        displayName: p.displayName,
        available: p.available,
        canRunChildTasks: p.available && p.capabilities?.mcpTransport !== undefined,
        reason: p.reason,
        ...(p.limitResetAt === undefined ? {} : { limitResetAt: p.limitResetAt }),
        models: listed.models,
        omittedModels: listed.omittedModels,
        ...(offered.length > 0 && offered.length < 3 ? { runtimeModes: [...offered] } : {}),
        steering: p.capabilities?.steering ?? false,
      };
    }),
    features: { polling: true, cancellation: true, batchThreadCreation: true, maxBatchThreads: 20 },
  };
}

/** A configured project, as the new-thread dialog offers it. */
export interface UiProject {
  readonly projectId: string;
  readonly name: string;
}

/**
 * The web UI's provider record: orchestrator_capabilities' plus whether the provider can stop a running turn
 * (Interrupt, Stop, restart), and the configured projects a new thread may start in (the first is the default).
 */
export type UiCapabilitiesOutput = Omit<CapabilitiesOutput, "providers"> & {
  readonly providers: readonly (CapabilitiesOutput["providers"][number] & { readonly interrupt: boolean })[];
  readonly projects: readonly UiProject[];
};

/** GET /api/ui/capabilities: orchestrator_capabilities, each provider with `interrupt` added, and the projects. */
export async function uiCapabilities(ctx: AppContext, caller: Caller): Promise<UiCapabilitiesOutput> {
  const [base, listed] = await Promise.all([capabilities(ctx, caller, {}), ctx.registry.list()]);
  const interrupt = new Map(listed.map((p) => [p.instance.id, p.capabilities?.interrupt ?? false]));
  return {
    ...base,
    providers: base.providers.map((p) => ({ ...p, interrupt: interrupt.get(p.providerInstanceId) ?? false })),
    projects: ctx.projects.map((project) => ({ projectId: project.id, name: project.name })),
  };
}
