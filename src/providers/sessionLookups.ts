import type { AppThread } from "../contracts/thread.js";
import { derive } from "../core/ids.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { ProviderSessionManagerOptions } from "./sessionManager.js";

/** What the session manager derives for a session from Loom's records and its options: item ids, native threads, attempts, the agent's environment. */

/** The turn item and output stream ids the decider will give the provider's item (derived, so they agree). */
export function liveIds(driver: string, event: { readonly runId: string; readonly itemId: string }): { itemId: string; outputStreamId: string } {
  const itemId = derive.turnItemFromProviderItem({ driver, providerTurnId: event.runId, nativeItemId: event.itemId });
  return { itemId, outputStreamId: derive.outputStreamOfItem({ turnItemId: itemId }) };
}

/** The native thread id the provider last reported for the thread on this instance, or null. */
export function latestNativeThread(state: Orchestrator["state"], threadId: string, providerInstanceId: string): string | null {
  let latest: { nativeThreadId: string; updatedAt: string } | null = null;
  for (const record of state.providerThreads.values()) {
    if (record.threadId !== threadId || record.providerInstanceId !== providerInstanceId) continue;
    if (latest === null || record.updatedAt >= latest.updatedAt) latest = record;
  }
  return latest?.nativeThreadId ?? null;
}

/** Whether the run's open attempt was handed to this session (its provider knows the turn). */
export function handedTo(orchestrator: Orchestrator, runId: string, providerSessionId: string): boolean {
  const state = orchestrator.state;
  return (state.runAttempts.get(runId) ?? []).some((id) => {
    const attempt = state.attempts.get(id);
    return attempt !== undefined && attempt.endedAt === null && attempt.providerSessionId === providerSessionId;
  });
}

/** The agent process's extra environment (OpenSessionInput.traceEnvironment): the worktree's isolation variables, then the trace context. */
export function processEnvironment(options: ProviderSessionManagerOptions, thread: AppThread, runId: string): { traceEnvironment?: Readonly<Record<string, string>> } {
  if (options.traceEnvironment === undefined && options.workspaceEnvironment === undefined) return {};
  return { traceEnvironment: { ...options.workspaceEnvironment?.(thread), ...options.traceEnvironment?.(runId) } };
}
