import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import { toDomainEvent } from "../contracts/events.js";
import { activeRunOf } from "../engine/queries.js";
import type { Engine } from "./engine.js";
import type { Subscription } from "../store/eventStore.js";

/**
 * Follow the committed log and report each provider session that went idle
 * after its run: the run ended and its thread has no other live run and
 * nothing queued. The provider session itself stays open for the thread's
 * next turn (the idle reaper releases it later); what it held for the run,
 * such as its agent's MCP sessions, can be let go now.
 */
export function followIdleSessions(orchestrator: Engine, onIdle: (providerSessionId: string, threadId: string) => void): Subscription {
  return orchestrator.follow(orchestrator.state.lastSequence, (stored) => {
    const event = toDomainEvent(stored);
    if (event.type !== "run.updated" || !isTerminalRunStatus(event.data.run.status)) return;
    const state = orchestrator.state;
    const run = event.data.run;
    const thread = state.threads.get(run.threadId);
    if (thread === undefined || thread.queuedRuns.length > 0 || activeRunOf(state, thread.id) !== null) return;
    const attempts = state.runAttempts.get(run.id) ?? [];
    const last = attempts[attempts.length - 1];
    const sessionId = last === undefined ? null : (state.attempts.get(last)?.providerSessionId ?? null);
    if (sessionId !== null) onIdle(sessionId, thread.id);
  });
}
