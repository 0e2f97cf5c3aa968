import type { Command } from "../contracts/commands.js";
import { EffectKind, type EffectPayload, type SessionReleaseReason } from "../contracts/effects.js";
import type { OutboxRow } from "../contracts/envelopes.js";
import type { NormalizedProviderEvent, UsageEvent } from "../contracts/providerEvents.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import { ToolProfile } from "../contracts/tools/discoveryTools.js";
import { derive } from "../core/ids.js";
import { type Random, type TimerHandle, type Timers, systemRandom, systemTimers } from "../engine/clock.js";
import type { EffectContext, EffectHandlers } from "../engine/outboxWorker.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { runInput } from "../engine/runInput.js";
import { activeRunOf, openOutputSchema } from "../engine/queries.js";
import { resumeRecap } from "../engine/resumeRecap.js";
import { limitNotice } from "./kit/limitSignals.js";
import { type LiveSession, noteUsage, outageStop, rememberLimit, usageLimitStop } from "./liveSession.js";
import { messageOf } from "./kit/errorMessage.js";
import { handedTo, latestNativeThread, liveIds, processEnvironment } from "./sessionLookups.js";
import { transientRetryDelay, transientRetryNotice } from "./transientRetry.js";
import type { ProviderRegistry } from "./registry.js";
import type { SecretVault } from "./secretVault.js";
import type { WarmPools } from "./warmPool.js";

/** Issues and revokes the bearer tokens injected into agents (implemented by McpCredentialRegistry). */
export interface SessionCredentials {
  issue(
    scope: { environmentId: string; threadId: string; providerInstanceId: string; providerSessionId: string },
    options?: { toolProfile?: ToolProfile },
  ): { token: string; credentialId: string } | Promise<{ token: string; credentialId: string }>;
  revokeSession(providerSessionId: string): number | Promise<number>;
}

export interface ProviderSessionManagerOptions {
  readonly orchestrator: Orchestrator;
  readonly registry: ProviderRegistry;
  readonly credentials: SessionCredentials;
  readonly environmentId: string;
  /** Loom's MCP endpoint, injected into agents with their session token. */
  readonly mcpUrl: () => string;
  /** The working directory for a thread's agent. */
  readonly workingDirectory: (thread: AppThread) => string;
  /** A session with no run and nothing queued is released this long after its last activity. */
  readonly idleMs: number;
  /** A session whose run has been silent this long is released and the run interrupted; idleMs when absent. */
  readonly stalledMs?: number;
  readonly clock?: () => number;
  /** The idle reaper's timer; the system's by default. */
  readonly timers?: Timers;
  /** Native session ids for new sessions; random by default. */
  readonly random?: Random;
  /** The jitter of transient-error retries, a number in [0, 1) (default Math.random). */
  readonly jitter?: () => number;
  readonly log?: (line: string) => void;
  /** The server log file: which sessions open, are held and are released. Never given a token. */
  readonly sessionLog?: SessionLog;
  /** The folder a thread's agent keeps on an instance across sessions (OpenSessionInput.home); none when absent. */
  readonly agentHome?: (providerInstanceId: string, threadId: string) => string;
  /** Remove every agent home of a thread (a deleted thread's, once its session is gone). */
  readonly forgetAgentHomes?: (threadId: string) => Promise<void>;
  /** Owner-supplied secrets: the session that asked gets them in its turns' environment. */
  readonly secrets?: SecretVault;
  /** Warm sessions a thread's first session on an instance takes instead of starting an agent (docs/warm-pools.md). */
  readonly pools?: WarmPools;
  /** The trace context (and OTLP exporter variables) of the agent process a run's session starts (OpenSessionInput.traceEnvironment); none when absent. */
  readonly traceEnvironment?: (runId: string) => Readonly<Record<string, string>>;
  /** A worktree thread's isolation variables (PORT, LOOM_PORT_BASE, ...; docs/workspaces.md): in its agent's process and turn environment; none when absent. */
  readonly workspaceEnvironment?: (thread: AppThread) => Readonly<Record<string, string>>;
}

/** Where the manager reports the sessions it opens, holds and releases. */
export type SessionLog = (level: "info" | "debug", line: string) => void;

/** A provider session open in this process (`loom sessions list`). */
export interface HeldSession {
  readonly threadId: string;
  readonly providerSessionId: string;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly openedAt: number;
  readonly lastActivityAt: number;
  /** The agent continued its own earlier conversation when this session opened. */
  readonly resumed: boolean;
  /** The session came out of a warm pool (it was started before the thread needed it). */
  readonly fromPool: boolean;
}

/** The effect kinds the session manager runs: the provider.* ones. */
export type ProviderEffectHandlers = Pick<
  EffectHandlers,
  | typeof EffectKind.startTurn
  | typeof EffectKind.steerTurn
  | typeof EffectKind.interruptTurn
  | typeof EffectKind.respondRequest
  | typeof EffectKind.cancelBackgroundWork
  | typeof EffectKind.releaseSession
>;

/**
 * Owns the live provider sessions, one per thread, and runs the provider
 * effects of the outbox. Provider events become runtime ingestion commands.
 * A credential is issued before a session opens and revoked when it is
 * released (spec 000, Transport And Authentication).
 */
export class ProviderSessionManager {
  private readonly sessions = new Map<string, LiveSession>();
  private readonly clock: () => number;
  private readonly timers: Timers;
  private readonly random: Random;
  private readonly jitter: () => number;
  private reaper: TimerHandle | null = null;
  /** Set by abandon(): no session opens any more. */
  private abandoned = false;

  constructor(private readonly options: ProviderSessionManagerOptions) {
    this.clock = options.clock ?? Date.now;
    this.timers = options.timers ?? systemTimers;
    this.random = options.random ?? systemRandom;
    this.jitter = options.jitter ?? Math.random;
    // The pools start no agent while this node's running turns fill the CPUs.
    if (options.pools !== undefined) options.pools.busyTurns = () => this.turnsRunning();
  }

  /** Sessions whose agent is in a turn now. */
  turnsRunning(): number {
    let running = 0;
    for (const session of this.sessions.values()) if (session.turnRunning) running += 1;
    return running;
  }

  /** Effect handlers for the outbox worker's provider.* kinds. */
  handlers(): ProviderEffectHandlers {
    return {
      [EffectKind.startTurn]: (payload) => this.startTurn(payload),
      [EffectKind.steerTurn]: (payload, effect) => this.steerTurn(payload, effect),
      [EffectKind.interruptTurn]: (payload, effect) => this.interruptTurn(payload, effect),
      [EffectKind.respondRequest]: (payload) => this.respondRequest(payload),
      [EffectKind.cancelBackgroundWork]: (payload) => this.cancelBackgroundWork(payload),
      [EffectKind.releaseSession]: (payload) => this.release(payload.threadId, payload.reason, payload.message),
    };
  }

  /** An effect that failed for good: a start that never happened fails its run, an answer that never arrived re-opens or expires its request. */
  onEffectFailed(row: OutboxRow, error: unknown): void {
    if (row.kind === EffectKind.respondRequest) {
      this.answerUndelivered(row, error);
      return;
    }
    if (row.kind !== EffectKind.startTurn) {
      this.options.log?.(`loom: effect ${row.kind} failed: ${messageOf(error)}`);
      return;
    }
    const { threadId, runId } = row.payload as EffectPayload<typeof EffectKind.startTurn>;
    this.dispatch({
      type: "provider-runtime.run-lost",
      commandId: `cmd:start-failed:${row.id}`,
      data: { threadId, runId, status: "failed", reason: "start_failed", message: `The provider could not start this run: ${messageOf(error)}` },
    });
  }

  /** An answer that never reached its callback re-opens the request, or expires it when the callback is gone. */
  private answerUndelivered(row: OutboxRow, error: unknown): void {
    const { threadId, requestId, nativeRequestId } = row.payload as EffectPayload<typeof EffectKind.respondRequest>;
    this.options.log?.(`loom: answer to ${requestId} not delivered: ${messageOf(error)}`);
    this.dispatch({
      type: "runtime-request.delivery.fail",
      commandId: `cmd:delivery-failed:${row.id}`,
      data: { threadId, requestId, reason: messageOf(error).slice(0, 2_000) || "delivery failed", callbackGone: nativeRequestId === null || !this.sessions.has(threadId) },
    });
  }

  startReaper(intervalMs = Math.max(250, Math.min(60_000, Math.min(this.options.idleMs, this.stalledMs) / 4))): void {
    this.reaper = this.timers.interval(intervalMs, () => this.reapIdle(), { unref: true });
  }

  private get stalledMs(): number {
    return this.options.stalledMs ?? this.options.idleMs;
  }

  /**
   * Release every session with nothing to do (no run, nothing queued) quiet
   * for idleMs, and every session whose run has been silent for stalledMs.
   */
  reapIdle(): void {
    const now = this.clock();
    const state = this.options.orchestrator.state;
    for (const [threadId, session] of this.sessions) {
      const thread = state.threads.get(threadId);
      const busy = thread !== undefined && (thread.queuedRuns.length > 0 || activeRunOf(state, threadId) !== null);
      const limit = busy ? this.stalledMs : this.options.idleMs;
      if (session.lastActivity > now - limit) continue;
      const message = busy
        ? `The provider session was released after ${duration(limit)} without activity; a run still on it was interrupted.`
        : `The provider session was released after ${duration(limit)} with no work for it.`;
      // The reaper runs on a timer, where a rejection would end the process: a release cut off (the store closed) is logged.
      this.release(threadId, "idle_reaped", message).catch((error: unknown) => this.options.log?.(`loom: releasing the idle session of ${threadId} failed: ${messageOf(error)}`));
    }
    if (this.sessions.size > 0) this.options.sessionLog?.("debug", `sessions: holding ${this.sessions.size}: ${[...this.sessions.values()].map((s) => `${s.providerSessionId} (idle ${duration(now - s.lastActivity)})`).join(", ")}`);
  }

  /** The sessions open in this process, oldest first. */
  held(): HeldSession[] {
    return [...this.sessions].map(([threadId, s]) => ({
      threadId,
      providerSessionId: s.providerSessionId,
      providerInstanceId: s.providerInstanceId,
      driver: s.driver,
      openedAt: s.openedAt,
      lastActivityAt: s.lastActivity,
      resumed: s.resumed,
      fromPool: s.fromPool,
    }));
  }

  hasSession(threadId: string): boolean {
    return this.sessions.has(threadId);
  }

  /** Whether a provider session is open in this process (a released or unknown one is not). */
  isSessionLive(providerSessionId: string): boolean {
    for (const session of this.sessions.values()) if (session.providerSessionId === providerSessionId) return true;
    return false;
  }

  /** Release every session (server shutdown). */
  async shutdown(): Promise<void> {
    this.reaper?.cancel();
    await this.options.pools?.shutdown();
    await Promise.all([...this.sessions.keys()].map((threadId) => this.release(threadId, "shutdown", "Loom shut down; the provider session ended with it.")));
  }

  /**
   * Stop every agent process without recording anything, and open no new
   * session: the node lost its leases (docs/postgres.md "When a node dies"),
   * and the node that took its work over records the sessions' end.
   */
  async abandon(): Promise<void> {
    this.abandoned = true;
    this.reaper?.cancel();
    await this.options.pools?.shutdown();
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(
      sessions.map(async (session) => {
        this.options.secrets?.dropSession(session.providerSessionId);
        try {
          await session.runtime.stop();
        } catch (error) {
          this.options.log?.(`loom: stopping session ${session.providerSessionId} failed: ${messageOf(error)}`);
        }
      }),
    );
  }

  private async startTurn({ threadId, runId }: EffectPayload<typeof EffectKind.startTurn>): Promise<void> {
    const state = this.options.orchestrator.state;
    const run = state.runs.get(runId);
    const thread = state.threads.get(threadId);
    if (run === undefined || thread === undefined || run.status !== "starting") return;
    if (this.skipIfInterrupted(threadId, runId)) return;
    // The run's input: its message, after the context the decider attached to the run (a handoff, a fork or merge-back transfer).
    const session = await this.ensureSession(thread, run.providerInstanceId, runId);
    const recap = session.recapPending ? resumeRecap(this.options.orchestrator.state, this.options.orchestrator.timeline, thread, run, session.providerInstanceId) : null;
    const text = runInput(this.options.orchestrator.state, this.options.orchestrator.timeline, run, recap === null ? [] : [recap]);
    // Opening a session takes time: the run may have ended or been stopped meanwhile.
    if (this.options.orchestrator.state.runs.get(runId)?.status !== "starting") return;
    if (this.skipIfInterrupted(threadId, runId)) return;
    // The attempt names the session that carries the run; a run that left `starting` meanwhile is refused here.
    const attempt = await this.options.orchestrator.dispatch({
      type: "provider-runtime.attempt-started",
      commandId: `cmd:attempt:${session.providerSessionId}:${runId}`,
      data: { threadId, runId, providerSessionId: session.providerSessionId },
    });
    if (attempt.status === "rejected") return;
    session.lastActivity = this.clock();
    session.recapPending = false;
    const env = { ...this.options.workspaceEnvironment?.(thread), ...this.options.secrets?.environmentFor(session.providerSessionId) };
    const outputSchema = openOutputSchema(this.options.orchestrator.state, threadId);
    // The agent is busy from here (turn.started may come later): refills wait for the CPUs it uses.
    session.turnRunning = true;
    const input = { runId, input: text, ...(Object.keys(env).length === 0 ? {} : { env }), ...(outputSchema === null ? {} : { outputSchema }) };
    session.turns.set(runId, { input, startedAt: this.clock(), retries: 0, transient: null, backingOff: false });
    try {
      await session.runtime.startTurn(input);
    } catch (error) {
      session.turnRunning = false;
      this.options.pools?.nudge();
      throw error;
    }
  }

  /** A run stopped before its turn started ends here, since no provider turn exists to interrupt. */
  private skipIfInterrupted(threadId: string, runId: string): boolean {
    if (this.options.orchestrator.state.runs.get(runId)?.interruptRequestedAt == null) return false;
    this.dispatch({
      type: "provider-runtime.turn-completed",
      commandId: `cmd:turn-skipped:${runId}`,
      data: { threadId, runId, status: "interrupted", error: null, endReason: "interrupted_before_start" },
    });
    return true;
  }

  private async ensureSession(thread: AppThread, providerInstanceId: string | null, runId: string): Promise<LiveSession> {
    const existing = this.sessions.get(thread.id);
    if (existing !== undefined && existing.providerInstanceId === providerInstanceId) return existing;
    if (existing !== undefined) await this.release(thread.id, "detached", "The thread moved to another provider instance.");
    if (providerInstanceId === null) throw new Error(`thread ${thread.id} has no provider instance`);
    if (this.abandoned) throw new Error("this Loom node stopped after losing its leases; it opens no provider session");
    const { registry, credentials, environmentId } = this.options;
    const instance = registry.instance(providerInstanceId);
    const driver = registry.driverFor(providerInstanceId);
    if (instance === null || driver === null) throw new Error(`provider instance ${providerInstanceId} has no adapter`);
    const providerSessionId = derive.providerSessionForThread({ providerInstanceId, threadId: thread.id, nativeSessionId: this.random.uuid() });
    // The instance's tool profile trims what the agent's tools/list shows (docs/mcp.md, "Tool profiles").
    const credential = await credentials.issue({ environmentId, threadId: thread.id, providerInstanceId, providerSessionId }, { toolProfile: instance.toolProfile ?? ToolProfile.full });
    const state = this.options.orchestrator.state;
    // An earlier session of this thread on this instance ended: the agent continues its conversation, natively or from a recap.
    const earlier = [...state.providerSessions.values()].some((s) => s.threadId === thread.id && s.providerInstanceId === providerInstanceId && s.id !== providerSessionId);
    const canResume = driver.capabilities(instance).resume;
    const resumeId = earlier && canResume ? latestNativeThread(state, thread.id, providerInstanceId) : null;
    // A recap stands in for a conversation the agent cannot continue: none when a resuming driver never recorded one.
    const needsRecap = earlier && (!canResume || resumeId !== null);
    let live: LiveSession | null = null;
    const binding = {
      threadId: thread.id,
      providerSessionId,
      home: this.options.agentHome?.(providerInstanceId, thread.id) ?? null,
      cwd: this.options.workingDirectory(thread),
      runtimeMode: thread.runtimeMode,
      interactionMode: thread.interactionMode,
      model: thread.modelSelection?.model ?? null,
      outputSchema: openOutputSchema(state, thread.id),
      mcp: { url: this.options.mcpUrl(), token: credential.token },
      ...processEnvironment(this.options, thread, runId),
      onEvent: (event: NormalizedProviderEvent) => this.onProviderEvent(thread.id, event),
    };
    // A thread's first session on the instance may take a warm one: it has no conversation to resume.
    const warm = earlier ? null : (this.options.pools?.take(providerInstanceId, binding) ?? null);
    try {
      const runtime =
        warm !== null
          ? await warm.session.bind(binding)
          : await driver.openSession({ ...binding, instance, resume: resumeId === null ? null : { nativeThreadId: resumeId } });
      const now = this.clock();
      const resumed = resumeId !== null && runtime.resumed === true;
      live = { providerSessionId, openedAt: now, resumed, fromPool: warm !== null, recapPending: needsRecap && !resumed, turnRunning: false, providerInstanceId, driver: driver.driver, runtime, lastActivity: now, sequence: 0, usage: new Map(), usageLimits: new Map(), turns: new Map() };
      if (this.abandoned) {
        await runtime.stop();
        throw new Error("this Loom node stopped after losing its leases while the provider session opened");
      }
    } catch (error) {
      await credentials.revokeSession(providerSessionId);
      if (warm !== null) await warm.session.stop().catch(() => undefined);
      throw error;
    }
    this.sessions.set(thread.id, live);
    const how = live.resumed ? ", resumed" : live.recapPending ? ", with a recap of its earlier sessions" : warm !== null ? `, from the pool (${warm.warmSessionId})` : "";
    this.options.sessionLog?.("info", `sessions: opened ${providerSessionId} for ${thread.id} on ${providerInstanceId} (${driver.driver}${how}); holding ${this.sessions.size}`);
    this.dispatch({
      type: "provider-runtime.session-opened",
      commandId: `cmd:session-opened:${providerSessionId}`,
      data: { threadId: thread.id, providerSessionId, providerInstanceId, driver: driver.driver },
    });
    return live;
  }

  private onProviderEvent(threadId: string, event: NormalizedProviderEvent): void {
    const session = this.sessions.get(threadId);
    if (session === undefined) return;
    session.lastActivity = this.clock();
    const commandId = `cmd:runtime:${session.providerSessionId}:${++session.sequence}`;
    switch (event.type) {
      case "turn.started":
        session.turnRunning = true;
        this.dispatch({
          type: "provider-runtime.turn-started",
          commandId,
          data: { threadId, runId: event.runId, providerSessionId: session.providerSessionId, nativeThreadId: event.nativeThreadId ?? null, nativeTurnId: event.nativeTurnId ?? null },
        });
        return;
      case "item.completed":
        this.dispatch({
          type: "provider-runtime.item-completed",
          commandId,
          data: { threadId, runId: event.runId, driver: session.driver, nativeItemId: event.itemId, item: event.item },
        });
        if (event.item.kind === "command_execution") this.options.orchestrator.liveChannel.endOutput(liveIds(session.driver, event).outputStreamId);
        return;
      case "turn.completed": {
        session.turnRunning = false;
        this.options.pools?.nudge();
        // A transient limit ended the turn: Loom tries it again after a backoff (docs/limits.md, "Transient errors").
        if (event.status === "failed" && this.retryTransient(threadId, session, event.runId, commandId)) return;
        const tries = session.turns.get(event.runId);
        session.turns.delete(event.runId);
        const usage = session.usage.get(event.runId)?.latest;
        session.usage.delete(event.runId);
        const stop = { session, registry: this.options.registry, state: this.options.orchestrator.state, threadId, runId: event.runId };
        const limit = event.status === "failed" ? (usageLimitStop(stop) ?? outageStop(stop, tries, this.clock())) : undefined;
        session.usageLimits.delete(event.runId);
        this.dispatch({
          type: "provider-runtime.turn-completed",
          commandId,
          data: { threadId, runId: event.runId, status: event.status, error: event.error, ...(usage === undefined ? {} : { usage }), ...(limit === undefined ? {} : { limit }) },
        });
        return;
      }
      case "usage":
        this.onUsage(threadId, session, commandId, event);
        return;
      case "limit":
        // A limit the provider signalled, on the timeline as a warning notice (docs/limits.md); one item per
        // signal, named by its session too, as a run may outlive a session. A usage limit also makes the
        // instance unavailable until it resets.
        this.options.registry.noteLimit(session.providerInstanceId, event);
        rememberLimit(session, event);
        this.dispatch({
          type: "provider-runtime.item-completed",
          commandId,
          data: { threadId, runId: event.runId, driver: session.driver, nativeItemId: `limit:${session.providerSessionId}:${session.sequence}`, item: limitNotice(event) },
        });
        return;
      case "background_task":
        this.dispatch({
          type: "provider-runtime.background-task",
          commandId,
          data: { threadId, runId: event.runId, driver: session.driver, nativeTaskId: event.taskId, kind: event.kind, awaited: event.awaited, status: event.status, ...(event.title === undefined ? {} : { title: event.title }) },
        });
        return;
      case "item.delta":
        // Streaming only (DESIGN.md invariant 14): live subscribers hear it, the log never does.
        this.options.orchestrator.liveChannel.publishDelta({ threadId, runId: event.runId, itemId: liveIds(session.driver, event).itemId, text: event.text });
        return;
      case "item.output":
        this.options.orchestrator.liveChannel.appendOutput({ threadId, runId: event.runId, ...liveIds(session.driver, event), text: event.text, ...(event.command === undefined ? {} : { command: event.command }) });
        return;
      default: {
        const exhaustive: never = event;
        return exhaustive;
      }
    }
  }

  /**
   * Retry a turn a transient limit failed, when the policy allows
   * (transientRetry.ts): a notice on the run says when, and the same input
   * goes to the provider again after the delay, unless the run ended or its
   * session went meanwhile. Returns whether a retry was scheduled.
   */
  private retryTransient(threadId: string, session: LiveSession, runId: string, commandId: string): boolean {
    const tries = session.turns.get(runId);
    if (tries === undefined || tries.transient === null) return false;
    const limit = tries.transient;
    const delayMs = transientRetryDelay({
      limit,
      retries: tries.retries,
      elapsedMs: this.clock() - tries.startedAt,
      coolDownMs: this.options.registry.coolDownMs(session.providerInstanceId),
      jitter: this.jitter(),
    });
    if (delayMs === null) return false;
    tries.retries += 1;
    tries.transient = null;
    tries.backingOff = true;
    this.dispatch({
      type: "provider-runtime.item-completed",
      commandId,
      data: { threadId, runId, driver: session.driver, nativeItemId: `retry:${session.providerSessionId}:${session.sequence}`, item: { kind: "system_notice", level: "info", text: transientRetryNotice(limit, tries.retries, delayMs) } },
    });
    this.timers.timeout(delayMs, () => {
      if (!tries.backingOff) return;
      tries.backingOff = false;
      const run = this.options.orchestrator.state.runs.get(runId);
      if (this.sessions.get(threadId) !== session || run === undefined || isTerminalRunStatus(run.status)) return;
      if (run.interruptRequestedAt !== null) {
        // Stopped while it waited (before the interrupt reached this session): no turn runs to stop, so it ends here.
        this.dispatch({ type: "provider-runtime.turn-completed", commandId: `cmd:interrupt-backoff:${runId}:${tries.retries}`, data: { threadId, runId, status: "interrupted", error: null } });
        return;
      }
      session.turnRunning = true;
      session.runtime.startTurn(tries.input).catch((error: unknown) => {
        session.turnRunning = false;
        this.dispatch({ type: "provider-runtime.turn-completed", commandId: `cmd:retry-failed:${runId}:${tries.retries}`, data: { threadId, runId, status: "failed", error: messageOf(error) } });
      });
    });
    return true;
  }

  /** Keep the latest usage; record it at coarse checkpoints during a long turn (the turn's end records the final one). */
  private onUsage(threadId: string, session: LiveSession, commandId: string, event: UsageEvent): void {
    const prices = this.options.registry.instance(session.providerInstanceId)?.prices;
    const usage = noteUsage(session, event, prices, this.options.orchestrator.state.runs.get(event.runId)?.modelSelection?.model ?? null, this.clock());
    if (usage !== null) this.dispatch({ type: "provider-runtime.usage-reported", commandId, data: { threadId, runId: event.runId, usage } });
  }

  private async steerTurn({ threadId, runId, messageId, text }: EffectPayload<typeof EffectKind.steerTurn>, effect: EffectContext): Promise<void> {
    const session = this.sessions.get(threadId);
    if (session !== undefined) {
      session.lastActivity = this.clock();
      try {
        await session.runtime.steerTurn({ runId, input: text });
        return;
      } catch (error) {
        // The provider refused the steer, most often because the turn ended before the
        // steer reached it (its turn.completed not yet recorded): the message goes on below.
        this.options.log?.(`loom: steering run ${runId} failed, re-sending the message as a follow-up: ${messageOf(error)}`);
      }
    }
    // No turn will read the message (its session went away, or the provider refused
    // it), so it is sent again as a follow-up run of its own.
    await this.options.orchestrator.dispatch({
      type: "message.dispatch",
      commandId: `cmd:resteer:${effect.effectId}`,
      data: { threadId, text, mode: "queue", messageId: `${messageId}:resent`, runKind: "system_follow_up", createdBy: "system", creationSource: "api" },
    });
  }

  private async interruptTurn({ threadId, runId }: EffectPayload<typeof EffectKind.interruptTurn>, effect: EffectContext): Promise<void> {
    const session = this.sessions.get(threadId);
    const run = this.options.orchestrator.state.runs.get(runId);
    if (run === undefined || run.status === "queued" || run.endedAt !== null) return;
    if (session === undefined || !handedTo(this.options.orchestrator, runId, session.providerSessionId)) {
      // Nothing runs the turn (any more, or yet: a prepared run still making its
      // workspace): end it here so it never stays active.
      this.dispatch({ type: "provider-runtime.turn-completed", commandId: `cmd:interrupt-orphan:${effect.effectId}`, data: { threadId, runId, status: "interrupted", error: null } });
      return;
    }
    const tries = session.turns.get(runId);
    if (tries?.backingOff === true) {
      // Between a transient failure and its retry no provider turn runs: the interrupt ends the run now.
      tries.backingOff = false;
      session.turns.delete(runId);
      this.dispatch({ type: "provider-runtime.turn-completed", commandId: `cmd:interrupt-backoff:${effect.effectId}`, data: { threadId, runId, status: "interrupted", error: null } });
      return;
    }
    await session.runtime.interruptTurn({ runId });
  }

  /** Background work Loom cancelled: a driver that can stop it does; without a session (gone, or a restart) nothing runs it any more. */
  private async cancelBackgroundWork({ threadId, runId, nativeTaskIds }: EffectPayload<typeof EffectKind.cancelBackgroundWork>): Promise<void> {
    const session = this.sessions.get(threadId);
    if (session === undefined || nativeTaskIds.length === 0) return;
    await session.runtime.cancelBackgroundTasks?.({ runId, taskIds: nativeTaskIds });
  }

  private async respondRequest({ threadId, nativeRequestId, response }: EffectPayload<typeof EffectKind.respondRequest>): Promise<void> {
    const session = this.sessions.get(threadId);
    if (session === undefined || nativeRequestId === null) throw new Error(`no live session for thread ${threadId} to deliver the response to`);
    session.lastActivity = this.clock();
    await session.runtime.respondToRequest({ requestId: nativeRequestId, response });
  }

  private async release(threadId: string, reason: SessionReleaseReason, message: string): Promise<void> {
    await this.stopSession(threadId, reason, message);
    // A deleted thread's agent will never resume: its home goes with its last session.
    if (this.options.orchestrator.state.threads.get(threadId)?.deletedAt != null && !this.sessions.has(threadId)) {
      await this.options.forgetAgentHomes?.(threadId);
    }
  }

  private async stopSession(threadId: string, reason: SessionReleaseReason, message: string): Promise<void> {
    const session = this.sessions.get(threadId);
    if (session === undefined) return;
    this.sessions.delete(threadId);
    if (session.turnRunning) this.options.pools?.nudge();
    this.options.sessionLog?.("info", `sessions: released ${session.providerSessionId} of ${threadId} (${reason}) after ${duration(this.clock() - session.openedAt)}; holding ${this.sessions.size}`);
    await this.options.credentials.revokeSession(session.providerSessionId);
    this.options.secrets?.dropSession(session.providerSessionId);
    // Queue the release before stopping the process: a send that arrives while it stops
    // starts a run on a new session, which a later release of this one must not end.
    const released = this.options.orchestrator.dispatch({
      type: "provider-runtime.session-released",
      commandId: `cmd:session-released:${session.providerSessionId}`,
      data: { threadId, providerSessionId: session.providerSessionId, reason, message },
    });
    released.catch(() => undefined); // awaited below; not unhandled while the process stops
    try {
      await session.runtime.stop();
    } catch (error) {
      this.options.log?.(`loom: stopping session ${session.providerSessionId} failed: ${messageOf(error)}`);
    }
    await released;
  }

  private dispatch(command: Command): void {
    this.options.orchestrator.dispatch(command).catch((error: unknown) => {
      this.options.log?.(`loom: dispatching ${command.type} failed: ${messageOf(error)}`);
    });
  }
}

function duration(ms: number): string {
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
