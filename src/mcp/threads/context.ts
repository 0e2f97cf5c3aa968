import { randomUUID } from "node:crypto";
import type { ClientCommand } from "../../contracts/commands.js";
import type { AcceptedReceipt } from "../../contracts/envelopes.js";
import { derive, joinId } from "../../core/ids.js";
import type { Orchestrator } from "../../engine/orchestrator.js";
import type { ProjectConfig } from "../../config/config.js";
import type { ProviderRegistry } from "../../providers/registry.js";
import { type OrchestratorMcpFailureCode, OrchestratorMcpError } from "../failures.js";
import type { Caller } from "./policy.js";

/** What the thread tools share: the engine, the providers, and this environment's settings. */
export interface ThreadToolsContext {
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
}

/** Rejection codes of the decider and the wire failure they become. */
const FAILURE_OF: Readonly<Record<string, OrchestratorMcpFailureCode>> = {
  thread_not_found: "thread_not_found",
  thread_deleted: "thread_not_found",
  run_not_found: "run_not_found",
  request_not_found: "invalid_request",
  request_not_pending: "invalid_request",
  invalid_response: "invalid_request",
  thread_not_sendable: "thread_not_sendable",
  thread_not_interruptible: "thread_not_interruptible",
  interrupt_already_requested: "thread_not_interruptible",
  run_not_active: "thread_not_interruptible",
  provider_not_set: "provider_unavailable",
  provider_unavailable: "provider_unavailable",
  invalid_title: "invalid_request",
  title_unchanged: "invalid_request",
  pull_request_already_linked: "invalid_request",
  pull_request_not_linked: "invalid_request",
  thread_already_exists: "invalid_request",
};

/** Dispatch a command; a rejection becomes the matching typed MCP failure. */
export async function dispatchOrFail(ctx: ThreadToolsContext, command: ClientCommand): Promise<AcceptedReceipt> {
  const receipt = await ctx.orchestrator.dispatch(command);
  if (receipt.status === "accepted") return receipt;
  const code = FAILURE_OF[receipt.rejection.code] ?? "orchestration_error";
  throw new OrchestratorMcpError(code, `${receipt.rejection.code}: ${receipt.rejection.message}`);
}

/**
 * Ids for one tool call. With a clientRequestId they are derived, so a retry
 * lands on the same command, thread and message; without one they are fresh.
 */
export function requestIds(caller: Caller, tool: string, clientRequestId: string | undefined) {
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

export function fail(code: OrchestratorMcpFailureCode, message: string): never {
  throw new OrchestratorMcpError(code, message);
}
