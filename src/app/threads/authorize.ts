import type { AppThread } from "../../contracts/thread.js";
import { type ActingCaller, type Caller, resolveCaller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import type { ToolName } from "../../contracts/tools/toolContracts.js";

/** A thread that exists and is not deleted, or thread_not_found. */
export function liveThreadOrFail(ctx: AppContext, threadId: string): AppThread {
  const thread = ctx.orchestrator.state.threads.get(threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `thread ${threadId} does not exist`);
  return thread;
}

/**
 * The caller and the thread it changes (spec 000, Policy): an agent needs a
 * live run (resolveCaller). That the target is no broader than the caller is
 * the decider's to say: every command sent for the change carries
 * `ceilingOf(acting)`. Without a threadId the target is the calling thread.
 */
export function authorizeChange(ctx: AppContext, caller: Caller, threadId: string | undefined, operation: ToolName): { acting: ActingCaller; target: AppThread } {
  const acting = resolveCaller(ctx.orchestrator.state, caller, operation);
  const targetId = threadId ?? acting.thread?.id ?? fail("invalid_request", "threadId is required for a caller outside a thread");
  return { acting, target: liveThreadOrFail(ctx, targetId) };
}
