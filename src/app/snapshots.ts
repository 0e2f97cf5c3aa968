import type { ShellSnapshot, ThreadSnapshot } from "../contracts/wire/projections.js";
import { type ShellPageOptions, ShellCursorError, type ShellSnapshotPage, shellSnapshot, shellSnapshotPage, threadSnapshot } from "../engine/projections.js";
import type { Caller } from "./caller.js";
import type { AppContext } from "./context.js";
import { fail } from "./errors.js";

/**
 * One page of the thread list as of the log position it reports (spec 004
 * §3.3 shell snapshot, HTTP): pinned threads first, then the rest newest
 * first, read at a settled point. A bad cursor or limit is invalid_request.
 */
export async function getShellSnapshotPage(ctx: AppContext, _caller: Caller, options: ShellPageOptions): Promise<ShellSnapshotPage> {
  try {
    return await ctx.orchestrator.readCommitted((state) => shellSnapshotPage(state, ctx.orchestrator.threads, options));
  } catch (error) {
    if (error instanceof ShellCursorError) fail("invalid_request", error.message);
    throw error;
  }
}

/**
 * The thread list as of the log position it reports (spec 004 §3.3 shell
 * snapshot), read at a settled point so a subscription from its sequence
 * misses nothing. `omitIdleSubagents` leaves out subagent threads with no run in flight.
 */
export function getShellSnapshot(
  ctx: AppContext,
  _caller: Caller,
  options: { readonly includeArchived?: boolean; readonly omitIdleSubagents?: boolean },
): Promise<ShellSnapshot> {
  return ctx.orchestrator.readCommitted((state) => shellSnapshot(state, options));
}

/** orchestration.getArchivedShellSnapshot: only the archived threads. */
export function getArchivedShellSnapshot(ctx: AppContext, _caller: Caller): Promise<ShellSnapshot> {
  return ctx.orchestrator.readCommitted((state) => shellSnapshot(state, { archivedOnly: true }));
}

/** One thread record as of the log position it reports, or thread_not_found. */
export function getThreadSnapshot(ctx: AppContext, _caller: Caller, threadId: string): ThreadSnapshot {
  return threadSnapshot(ctx.orchestrator.state, threadId) ?? fail("thread_not_found", `thread ${threadId} does not exist`);
}
