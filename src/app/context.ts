import { randomUUID } from "node:crypto";
import type { Command } from "../contracts/commands.js";
import type { AcceptedReceipt } from "../contracts/envelopes.js";
import type { ProjectConfig } from "../config/config.js";
import { derive, joinId } from "../core/ids.js";
import type { TaskWaiters } from "../engine/taskWaiters.js";
import type { Dispatched } from "../engine/dispatcher.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { ActingCaller } from "./caller.js";
import { errorOfRejection } from "./errors.js";
import type { ThreadSearchIndex } from "./search/threadSearch.js";
import type { SecretDelivery } from "./secrets/secretRequests.js";
import type { TitleRegenerations } from "./threads/titleRegeneration.js";
import type { ScheduleServices } from "./schedules/services.js";

/** What every app function shares: the engine, the providers, and this environment's settings. */
export interface AppContext {
  readonly orchestrator: Orchestrator;
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
  /** delegate_task waits in progress, so a result a wait takes is not also delivered as a notice. */
  readonly waiters: TaskWaiters;
  /** The search index projection (t3_thread_search). */
  readonly search: ThreadSearchIndex;
  /** Where owner-supplied secrets go (request_secret). */
  readonly secrets: SecretDelivery;
  /** Title regeneration settings and the titling turns in flight. */
  readonly titles: TitleRegenerations;
  /** Scheduled tasks: limits, time zone, webhook keys and URLs (docs/schedules.md). */
  readonly schedules: ScheduleServices;
}

/** An accepted command with the events it wrote (none when its commandId was already known). */
export interface Executed extends Dispatched {
  readonly receipt: AcceptedReceipt;
}

/** Dispatch a command; a rejection becomes the AppError of the failure table. */
export async function execute(ctx: AppContext, command: Command): Promise<Executed> {
  const outcome = await ctx.orchestrator.execute(command);
  if (outcome.receipt.status === "rejected") throw errorOfRejection(outcome.receipt.rejection);
  return { ...outcome, receipt: outcome.receipt };
}

/**
 * Ids for one call. With a clientRequestId they are derived, so a retry lands
 * on the same command, thread and message; without one they are fresh.
 */
export function requestIds(caller: ActingCaller, tool: string, clientRequestId: string | undefined) {
  const scope = caller.requestScope;
  const fresh = clientRequestId === undefined;
  return {
    command: (suffix = ""): string =>
      fresh ? `cmd:${randomUUID()}` : `${derive.commandFromClientRequest({ scope, tool, clientRequestId })}${suffix === "" ? "" : `:${suffix}`}`,
    thread: (index: number): string => (fresh ? `thread:${randomUUID()}` : derive.threadFromClientRequest({ scope, clientRequestId, index })),
    message: (index = 0): string =>
      fresh ? `message:${randomUUID()}` : `${derive.messageFromClientRequest({ scope, clientRequestId })}${index === 0 ? "" : `:index:${index}`}`,
    run: (index = 0): string | undefined => (fresh ? undefined : joinId("run", "client-request", scope, "request", clientRequestId, "index", String(index))),
  };
}
