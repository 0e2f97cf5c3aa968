import type { Run } from "../contracts/entities/runs.js";
import type { Ceiling } from "../contracts/modes.js";
import type { AppThread } from "../contracts/thread.js";
import type { ToolName } from "../contracts/tools/toolContracts.js";
import type { OrchestrationState } from "../core/state.js";
import { activeRunOf } from "../engine/queries.js";
import { TOOL_ACCESS } from "./access.js";
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
  /** The call's W3C traceparent: a run the call starts keeps it (docs/telemetry.md). */
  readonly traceParent?: string;
}

export interface AgentCaller {
  readonly kind: "agent";
  readonly environmentId: string;
  readonly threadId: string;
  readonly providerInstanceId: string;
  readonly providerSessionId: string;
  readonly traceParent?: string;
}

/** The envelope field that hands a caller's trace context to the command it sends. */
export function traceField(caller: Caller): { traceParent?: string } {
  return caller.traceParent === undefined ? {} : { traceParent: caller.traceParent };
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

/**
 * Resolve the caller for one operation. The one place of the live-run rule
 * (spec 000, Policy): an agent whose thread has no live run may read, but
 * every operation that creates or changes state (TOOL_ACCESS write) is
 * refused with parent_not_active. Its credential stays valid until its
 * provider session is released, so this is what stops work between runs.
 */
export function resolveCaller(state: OrchestrationState, caller: Caller, operation: ToolName): ActingCaller {
  if (caller.kind === "owner") return { kind: "owner", identity: caller, thread: null, activeRun: null, requestScope: "owner", providerInstanceId: null };
  const thread = state.threads.get(caller.threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `the calling thread ${caller.threadId} no longer exists`);
  const activeRun = activeRunOf(state, thread.id);
  if (activeRun === null && TOOL_ACCESS[operation] === "write") {
    fail("parent_not_active", `${operation} creates or changes state, which needs a live run on your thread ${thread.id}; it has none (reads stay allowed between runs)`);
  }
  return {
    kind: "thread",
    identity: caller,
    thread,
    activeRun,
    requestScope: caller.providerSessionId,
    providerInstanceId: caller.providerInstanceId,
  };
}

/**
 * The ceiling a caller's commands carry: its thread, whose modes the decider
 * reads from the state when it decides (src/core/policy/ceiling.ts), or
 * "none" for the owner. App functions resolve inputs (provider, model,
 * inherited modes) but leave the ceiling to the decider.
 */
export function ceilingOf(acting: ActingCaller): Ceiling {
  return acting.thread === null ? "none" : { callerThreadId: acting.thread.id };
}
