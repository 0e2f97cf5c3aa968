import { activeRunOf } from "../engine/queries.js";
import type { Caller } from "./caller.js";
import { type AppContext, execute } from "./context.js";
import { fail } from "./errors.js";
import { UNOBSERVED_WAIT, waitUntil } from "./waits.js";
import { uniqueByPrefix } from "./threads/tree.js";

/**
 * The provider sessions Loom holds (`loom sessions list|release`, GET
 * /api/sessions, POST /api/sessions/:id/release): every session the log
 * records as open, with how long it has been idle when this node holds it.
 * Owner only.
 */
export interface SessionInfo {
  readonly providerSessionId: string;
  readonly threadId: string;
  readonly threadTitle: string;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly startedAt: string;
  /** Whether this server process holds the session (on a shared database another node may). */
  readonly heldHere: boolean;
  /** The last provider activity, when held here. */
  readonly lastActivityAt: string | null;
  readonly idleMs: number | null;
  /** The agent continued its own earlier conversation when the session opened (held here only). */
  readonly resumed: boolean;
  /** The thread's active run, or null when the session has nothing to do. */
  readonly activeRunId: string | null;
  readonly queuedRuns: number;
  /** The session came out of a warm pool (held here only). */
  readonly fromPool: boolean;
}

/** A warm session: started ahead of need, no thread, no credential (docs/warm-pools.md). */
export interface WarmSessionInfo {
  readonly warmSessionId: string;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly openedAt: string;
  readonly idleMs: number;
}

export interface SessionListResult {
  readonly sessions: readonly SessionInfo[];
  /** The warm sessions this server keeps ready, oldest first. */
  readonly warm: readonly WarmSessionInfo[];
}

export interface SessionReleaseResult {
  readonly providerSessionId: string;
  readonly threadId: string;
  /** The run that was on the session and ended interrupted, if any. */
  readonly interruptedRunId: string | null;
}

/** What the session manager of this process reports about the sessions it holds. */
export interface HeldSessionFacts {
  readonly providerSessionId: string;
  readonly lastActivityAt: number;
  readonly resumed: boolean;
  readonly fromPool?: boolean;
}

/** What the warm pools of this process report. */
export interface WarmSessionFacts {
  readonly warmSessionId: string;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly openedAt: number;
}

const RELEASE_WAIT_MS = 30_000;

export function listSessions(ctx: AppContext, caller: Caller): SessionListResult {
  ownerOnly(caller);
  const state = ctx.orchestrator.state;
  const held = new Map((ctx.heldSessions?.() ?? []).map((s) => [s.providerSessionId, s]));
  const now = ctx.clock();
  const sessions = [...state.providerSessions.values()]
    .filter((s) => s.releasedAt === null)
    .map((s): SessionInfo => {
      const here = held.get(s.id);
      const thread = state.threads.get(s.threadId);
      return {
        providerSessionId: s.id,
        threadId: s.threadId,
        threadTitle: thread?.title ?? "",
        providerInstanceId: s.providerInstanceId,
        driver: s.driver,
        startedAt: s.startedAt,
        heldHere: here !== undefined,
        lastActivityAt: here === undefined ? null : new Date(here.lastActivityAt).toISOString(),
        idleMs: here === undefined ? null : Math.max(0, now - here.lastActivityAt),
        resumed: here?.resumed ?? false,
        activeRunId: activeRunOf(state, s.threadId)?.id ?? null,
        queuedRuns: thread?.queuedRuns.length ?? 0,
        fromPool: here?.fromPool ?? false,
      };
    })
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const warm = (ctx.warmSessions?.() ?? []).map(
    (w): WarmSessionInfo => ({ ...w, openedAt: new Date(w.openedAt).toISOString(), idleMs: Math.max(0, now - w.openedAt) }),
  );
  return { sessions, warm };
}

/**
 * Release one open session, named by its id, a unique prefix of it, or its
 * thread's id or prefix. A run still on it ends interrupted. Resolves once
 * the release is recorded.
 */
export async function releaseSession(ctx: AppContext, caller: Caller, ref: string): Promise<SessionReleaseResult> {
  ownerOnly(caller);
  const state = ctx.orchestrator.state;
  const open = [...state.providerSessions.values()].filter((s) => s.releasedAt === null);
  const id = uniqueByPrefix(
    "session",
    ref,
    open.map((s) => ({ id: s.id, label: state.threads.get(s.threadId)?.title ?? s.threadId, aliases: [s.threadId] })),
    "invalid_request",
    ["provider-session:", "thread:"],
  );
  const session = state.providerSessions.get(id)!;
  const run = activeRunOf(state, session.threadId);
  await execute(ctx, { type: "provider-session.detach", commandId: `cmd:session-release:${session.id}`, data: { threadId: session.threadId, reason: "The owner released the provider session." } });
  const released = await waitUntil(ctx, UNOBSERVED_WAIT, RELEASE_WAIT_MS, () => ctx.orchestrator.state.providerSessions.get(session.id)?.releasedAt != null, () => `releasing ${session.id}`);
  if (!released) fail("invalid_request", `session ${session.id} was asked to release but has not released within ${RELEASE_WAIT_MS / 1000} s; its node may be busy or gone`);
  const ended = run === null ? null : ctx.orchestrator.state.runs.get(run.id);
  return { providerSessionId: session.id, threadId: session.threadId, interruptedRunId: ended != null && ended.status === "interrupted" ? ended.id : null };
}

function ownerOnly(caller: Caller): void {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner may list or release provider sessions");
}
