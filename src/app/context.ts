import type { Command } from "../contracts/commands.js";
import type { AcceptedReceipt } from "../contracts/envelopes.js";
import type { ProjectConfig } from "../config/config.js";
import { derive, joinId } from "../core/ids.js";
import { type Random, type Timers, systemRandom } from "../engine/clock.js";
import type { Dispatched } from "../engine/dispatcher.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { Engine } from "./engine.js";
import type { ActingCaller } from "./caller.js";
import { errorOfRejection } from "./errors.js";
import type { ThreadSearchIndex } from "./search/threadSearch.js";
import type { SecretDelivery } from "./secrets/secretRequests.js";
import type { TitleRegenerations } from "./threads/titleRegeneration.js";
import type { WorkspaceSettings } from "./workspaces/paths.js";
import type { ScheduleServices } from "./schedules/services.js";
import type { HeldSessionFacts, WarmSessionFacts } from "./sessions.js";
import type { ProviderCatalogSettings } from "./providers/acpCatalog.js";
import type { GuestShareSettings } from "./guestShare/guestShares.js";

/** What every app function shares: the engine, the providers, and this environment's settings. */
export interface AppContext {
  /** The engine as app functions see it (src/app/engine.ts). */
  readonly orchestrator: Engine;
  readonly registry: ProviderRegistry;
  readonly environmentId: string;
  readonly projects: readonly ProjectConfig[];
  /** Where scratch threads get a folder of their own. */
  readonly scratchRoot: string;
  /** Server cap on waits (DESIGN.md invariant 7). */
  readonly maxWaitMs: number;
  /** How often a wait sends a progress notification. */
  readonly progressIntervalMs: number;
  readonly clock: () => number;
  /** Timers of waits; the system's when absent. */
  readonly timers?: Timers;
  /** Fresh ids of calls without a clientRequestId; random when absent. */
  readonly random?: Random;
  /** This server node, the holder of the task holds its waits record (docs/delegation.md, "Waits and notices"). */
  readonly nodeId: string;
  /** The search index projection (t3_thread_search). */
  readonly search: ThreadSearchIndex;
  /** Where owner-supplied secrets go (request_secret). */
  readonly secrets: SecretDelivery;
  /** Title regeneration settings and the titling turns in flight. */
  readonly titles: TitleRegenerations;
  /** Where Loom-managed worktrees go and how they are named (docs/workspaces.md). */
  readonly workspaces: WorkspaceSettings;
  /** Scheduled tasks: limits, time zone, webhook keys and URLs (docs/schedules.md). */
  readonly schedules: ScheduleServices;
  /** The provider sessions this process holds (`loom sessions list`); none when absent. */
  readonly heldSessions?: () => readonly HeldSessionFacts[];
  /** The warm sessions this process keeps ready (docs/warm-pools.md); none when absent. */
  readonly warmSessions?: () => readonly WarmSessionFacts[];
  /** The ACP registry catalog and the config file it prepares instances into; `unsupported` when absent. */
  readonly providerCatalog?: ProviderCatalogSettings;
  /** The guest share key and the server's URL its links start with (docs/guest-share.md); guest shares are `unsupported` when absent. */
  readonly guestShares?: GuestShareSettings;
}

/** An accepted command with the events it wrote (none when its commandId was already known). */
export interface Executed extends Dispatched {
  readonly receipt: AcceptedReceipt;
}

/** Dispatch a command; a rejection becomes the AppError of the failure table. */
export async function execute(ctx: Pick<AppContext, "orchestrator">, command: Command): Promise<Executed> {
  const outcome = await ctx.orchestrator.execute(command);
  if (outcome.receipt.status === "rejected") throw errorOfRejection(outcome.receipt.rejection);
  return { ...outcome, receipt: outcome.receipt };
}

/** Decide `command` without recording it (a dry run): throws the AppError a real call would meet, writes nothing. */
export function check(ctx: AppContext, command: Command): void {
  const rejection = ctx.orchestrator.check(command);
  if (rejection !== null) throw errorOfRejection(rejection);
}

/** A fresh random uuid from the context's id source. */
export function freshUuid(ctx: AppContext): string {
  return (ctx.random ?? systemRandom).uuid();
}

/**
 * Ids for one call. With a clientRequestId they are derived, so a retry lands
 * on the same command, thread and message; without one they are fresh.
 */
export function requestIds(caller: ActingCaller, tool: string, clientRequestId: string | undefined, random: Random = systemRandom) {
  const scope = caller.requestScope;
  const fresh = clientRequestId === undefined;
  return {
    command: (suffix = ""): string =>
      fresh ? `cmd:${random.uuid()}` : `${derive.commandFromClientRequest({ scope, tool, clientRequestId })}${suffix === "" ? "" : `:${suffix}`}`,
    thread: (index: number): string => (fresh ? `thread:${random.uuid()}` : derive.threadFromClientRequest({ scope, clientRequestId, index })),
    message: (index = 0): string =>
      fresh ? `message:${random.uuid()}` : `${derive.messageFromClientRequest({ scope, clientRequestId })}${index === 0 ? "" : `:index:${index}`}`,
    run: (index = 0): string | undefined => (fresh ? undefined : joinId("run", "client-request", scope, "request", clientRequestId, "index", String(index))),
  };
}
