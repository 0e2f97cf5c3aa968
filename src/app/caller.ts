import type { Run } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import type { OrchestrationState } from "../core/state.js";
import { activeRunOf } from "../engine/queries.js";
import { fail } from "./errors.js";

/**
 * Who calls an app function, as the transport authenticated it: the owner of
 * the state dir (the CLI, the UI, scripts), or an agent acting through the
 * provider session its credential names.
 */
export type Caller = OwnerCaller | AgentCaller;

export interface OwnerCaller {
  readonly kind: "owner";
  readonly environmentId: string;
}

export interface AgentCaller {
  readonly kind: "agent";
  readonly environmentId: string;
  readonly threadId: string;
  readonly providerInstanceId: string;
  readonly providerSessionId: string;
}

export function ownerCaller(environmentId: string): OwnerCaller {
  return { kind: "owner", environmentId };
}

/** A caller resolved against the current state: its thread and that thread's live run. */
export interface ActingCaller {
  readonly kind: "thread" | "owner";
  readonly identity: Caller;
  readonly thread: AppThread | null;
  readonly activeRun: Run | null;
  /** Scope of clientRequestId derivation: the provider session, or "owner". */
  readonly requestScope: string;
  readonly providerInstanceId: string | null;
}

export function resolveCaller(state: OrchestrationState, caller: Caller): ActingCaller {
  if (caller.kind === "owner") return { kind: "owner", identity: caller, thread: null, activeRun: null, requestScope: "owner", providerInstanceId: null };
  const thread = state.threads.get(caller.threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `the calling thread ${caller.threadId} no longer exists`);
  return {
    kind: "thread",
    identity: caller,
    thread,
    activeRun: activeRunOf(state, thread.id),
    requestScope: caller.providerSessionId,
    providerInstanceId: caller.providerInstanceId,
  };
}
