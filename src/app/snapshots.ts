import { type ShellPageOptions, ShellCursorError, type ShellSnapshotPage, type ThreadSnapshot, shellSnapshotPage, threadSnapshot } from "../engine/projections.js";
import type { Caller } from "./caller.js";
import type { AppContext } from "./context.js";
import { fail } from "./errors.js";

/**
 * One page of the thread list as of the log position it reports (spec 004
 * §3.3 shell snapshot): pinned threads first, then the rest newest first. A
 * bad cursor or limit is invalid_request.
 */
export function getShellSnapshot(ctx: AppContext, _caller: Caller, options: ShellPageOptions): ShellSnapshotPage {
  try {
    return shellSnapshotPage(ctx.orchestrator.state, ctx.orchestrator.threads, options);
  } catch (error) {
    if (error instanceof ShellCursorError) fail("invalid_request", error.message);
    throw error;
  }
}

/** One thread as of the log position it reports, or thread_not_found. */
export function getThreadSnapshot(ctx: AppContext, _caller: Caller, threadId: string): ThreadSnapshot {
  return threadSnapshot(ctx.orchestrator.state, threadId) ?? fail("thread_not_found", `thread ${threadId} does not exist`);
}
