import { type ShellSnapshot, type ThreadSnapshot, shellSnapshot, threadSnapshot } from "../engine/projections.js";
import type { Caller } from "./caller.js";
import type { AppContext } from "./context.js";
import { fail } from "./errors.js";

/** The thread list as of the log position it reports (spec 004 §3.3 shell snapshot). */
export function getShellSnapshot(ctx: AppContext, _caller: Caller, options: { readonly includeArchived?: boolean }): ShellSnapshot {
  return shellSnapshot(ctx.orchestrator.state, options);
}

/** One thread as of the log position it reports, or thread_not_found. */
export function getThreadSnapshot(ctx: AppContext, _caller: Caller, threadId: string): ThreadSnapshot {
  return threadSnapshot(ctx.orchestrator.state, threadId) ?? fail("thread_not_found", `thread ${threadId} does not exist`);
}
