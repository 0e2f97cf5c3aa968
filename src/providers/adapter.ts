import type { ProviderCapabilities } from "../contracts/capabilities.js";
import type { InteractionMode, RuntimeMode } from "../contracts/modes.js";
import type { ProviderInstanceConfig } from "../config/config.js";
import type { z } from "zod";
import type { NormalizedProviderEvent } from "./events.js";

export type { NormalizedProviderEvent } from "./events.js";
export { McpTransport, type ProviderCapabilities } from "../contracts/capabilities.js";

/**
 * The provider adapter contract (STYLE rule 4, DESIGN invariant 10). A driver
 * is a plain value registered under its name (`scripted`, `codex`, ...); it
 * declares what it can do as a capability record, and policies read that
 * record instead of the driver name.
 */

export interface ProviderProbe {
  /** The executable (or SDK) the driver needs is present. */
  readonly installed: boolean;
  readonly authenticated: boolean;
  /** Why not, in words a model can read; null when both hold. */
  readonly reason: string | null;
}

export interface OpenSessionInput {
  readonly instance: ProviderInstanceConfig;
  readonly threadId: string;
  readonly providerSessionId: string;
  /** Absolute working directory of the agent. */
  readonly cwd: string;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  /** Null: the provider's default model. */
  readonly model: string | null;
  /**
   * Loom's MCP endpoint and this session's bearer token, or null when the
   * session gets no Loom tools. Adapters pass the token to the agent and
   * never log it or write it into events (DESIGN invariant 8).
   */
  readonly mcp: { readonly url: string; readonly token: string } | null;
  /**
   * The agent's own earlier conversation on this thread: the native thread or
   * session id Loom recorded for the thread on this instance (a provider
   * thread's nativeThreadId). Given only to a driver whose capability record
   * says `resume`; the driver continues that conversation and reports
   * `resumed`, or starts a new one when it cannot.
   */
  readonly resume?: { readonly nativeThreadId: string } | null;
  /**
   * A folder kept for this thread on this instance across sessions and
   * restarts (`<state-dir>/agents/<instance>/<thread hash>`): where a driver
   * keeps the agent's home or config dir, so a later session can resume. Null:
   * none (the driver uses a temp dir).
   */
  readonly home?: string | null;
  /**
   * The output schema the thread's next turn carries (a structured result
   * still owed, docs/delegation.md), or null/absent. Every turn also gets its
   * own in `startTurn`; this one is for a driver whose agent can take a
   * schema only when it starts (Claude Code), so the first turn needs no
   * restart.
   */
  readonly outputSchema?: Readonly<Record<string, unknown>> | null;
  /**
   * Trace context for the agent's process (docs/telemetry.md): TRACEPARENT,
   * the span of the run the session opens for, and while Loom exports
   * traces the OTLP exporter variables (their headers are secrets: never log
   * them). A driver that starts an agent CLI that speaks OpenTelemetry puts
   * them in its environment; a warm session's process started without them.
   * A worktree thread's isolation variables (PORT, LOOM_PORT_BASE, ...;
   * docs/workspaces.md) come first in it.
   */
  readonly traceEnvironment?: Readonly<Record<string, string>>;
  /** Aborts opening (process spawn, handshake); it does not stop an open session. */
  readonly signal?: AbortSignal;
  /**
   * Event delivery. Installed before the adapter starts anything, so no event
   * is lost. The adapter calls it synchronously, in order, for this session
   * only; it never awaits it. The callback must not throw: it should hand the
   * event to a queue and return.
   */
  readonly onEvent: (event: NormalizedProviderEvent) => void;
}

/**
 * One open provider session. Methods resolve when the provider accepted the
 * request, not when the work is done: results arrive as events. A method the
 * capability record does not offer rejects with `ProviderError` code
 * `unsupported`. After `stop()` every method rejects with `session_closed`.
 */
export interface ProviderSessionRuntime {
  /** The session continued the conversation named by OpenSessionInput.resume (absent: it did not). */
  readonly resumed?: boolean;
  /**
   * Start a turn for `runId`. Its events carry the same runId. `env` holds
   * owner-supplied secrets for this session (request_secret): a driver whose
   * capability record sets `turnEnvironment` gives them to the commands the
   * turn runs; others ignore them. Never log or record them. `outputSchema`:
   * the JSON Schema the turn's final answer must match (structured results);
   * a driver that can constrain a turn's output natively does, others ignore
   * it (Loom validates the answer either way).
   */
  startTurn(input: {
    readonly runId: string;
    readonly input: string;
    readonly env?: Readonly<Record<string, string>>;
    readonly outputSchema?: Readonly<Record<string, unknown>>;
  }): Promise<void>;
  /** Add input to the running turn `runId` (capabilities.steering). */
  steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void>;
  /** Ask the running turn to stop; it still ends with turn.completed "interrupted". */
  interruptTurn(input: { readonly runId: string }): Promise<void>;
  /** Answer an approval_request or user_input_request by its requestId. */
  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void>;
  /**
   * Stop background work the session's turns left running (background_task
   * events' taskIds); one already over is ignored. A driver that cannot stop
   * its background work leaves this out: the work then ends with the session.
   */
  cancelBackgroundTasks?(input: { readonly runId: string; readonly taskIds: readonly string[] }): Promise<void>;
  /** Release the session and its process. Idempotent. No events follow it. */
  stop(): Promise<void>;
}

/** What a warm session learns when it is handed to a thread: everything of OpenSessionInput but the instance. */
export type WarmBinding = Omit<OpenSessionInput, "instance" | "signal" | "resume">;

/**
 * An agent session opened ahead of need (a warm pool, docs/warm-pools.md): its
 * start-up cost is paid, but it belongs to no thread and holds no credential.
 * `bind` hands it to one thread: from then on it is that thread's
 * ProviderSessionRuntime, with that thread's cwd, modes, model and MCP
 * credential. A warm session is bound at most once.
 */
export interface WarmProviderSession {
  /** Whether this warm session can serve a thread with these settings (else a new session opens). */
  fits(binding: WarmSettings): boolean;
  bind(binding: WarmBinding): Promise<ProviderSessionRuntime>;
  /** Release an unbound warm session. Idempotent. */
  stop(): Promise<void>;
}

export interface WarmOpenInput {
  readonly instance: ProviderInstanceConfig;
  readonly signal?: AbortSignal;
  /**
   * A folder the warm session may keep as its agent's home (absent: none).
   * It is on the same file system as the thread homes, so binding can move
   * it to the thread's home (kit/warmHome.ts); the pool removes leftovers of
   * a server that died.
   */
  readonly home?: string | null;
  /**
   * The settings of the instance's most recent thread session, or null before
   * any: a driver whose agent fixes them at start (Claude Code's working
   * directory) starts its warm session like that one (`warmNeedsDemand`).
   */
  readonly like?: WarmSettings | null;
}

/** What a warm session must match to be handed to a thread (`fits`). */
export type WarmSettings = Pick<WarmBinding, "cwd" | "runtimeMode" | "interactionMode" | "model" | "outputSchema">;

/** The schema of a driver's `options`: always an object, so docs can list its keys. */
export type DriverOptionsSchema = z.ZodObject;

export interface ProviderDriver {
  /** The `driver` name config entries use. */
  readonly driver: string;
  /**
   * The schema of an instance's `options` (kit/driverOptions.ts). Loom checks
   * every configured instance against it at start (validateProviderInstances),
   * and the driver's docs are checked against its keys.
   */
  readonly optionsSchema: DriverOptionsSchema;
  /** Pure and cheap: no process is spawned. */
  capabilities(instance: ProviderInstanceConfig): ProviderCapabilities;
  /** May spawn a process; callers cache the answer (see ProviderRegistry). */
  probe(instance: ProviderInstanceConfig): Promise<ProviderProbe>;
  openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime>;
  /**
   * Open a session that belongs to no thread yet (a warm pool). Only a driver
   * whose session can take a thread's cwd, modes and MCP credential after it
   * started offers it; a pool on any other driver is refused at start.
   */
  openWarm?(input: WarmOpenInput): Promise<WarmProviderSession>;
  /**
   * The pool an instance without a `pool` of its own gets (docs/warm-pools.md);
   * it fills after the instance's first session opens, so a server whose
   * instance is never used starts no agent for it.
   */
  readonly defaultPool?: { readonly size: number; readonly maxIdleMs: number };
  /**
   * Its warm sessions are started like the instance's most recent session
   * (WarmOpenInput.like), so its pool fills only after a session opened.
   */
  readonly warmNeedsDemand?: boolean;
}

export const ProviderErrorCode = {
  notInstalled: "not_installed",
  notAuthenticated: "not_authenticated",
  unsupported: "unsupported",
  startFailed: "start_failed",
  sessionClosed: "session_closed",
  turnNotActive: "turn_not_active",
  requestNotFound: "request_not_found",
  protocol: "protocol_error",
  aborted: "aborted",
} as const;
export type ProviderErrorCode = (typeof ProviderErrorCode)[keyof typeof ProviderErrorCode];

/** Whether repeating the same call may succeed without a config or state change. */
export function isRetryableProviderCode(code: ProviderErrorCode): boolean {
  switch (code) {
    case ProviderErrorCode.startFailed:
    case ProviderErrorCode.protocol:
    case ProviderErrorCode.aborted:
      return true;
    case ProviderErrorCode.notInstalled:
    case ProviderErrorCode.notAuthenticated:
    case ProviderErrorCode.unsupported:
    case ProviderErrorCode.sessionClosed:
    case ProviderErrorCode.turnNotActive:
    case ProviderErrorCode.requestNotFound:
      return false;
    default:
      return assertNever(code);
  }
}

/** A local adapter failure. Its message may reach a model, so it never holds a token. */
export class ProviderError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = "ProviderError";
    this.retryable = isRetryableProviderCode(code);
  }
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
