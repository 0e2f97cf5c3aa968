import type { ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { PiEventMapper } from "./piEvents.js";
import { JsonRpcProcess } from "../kit/jsonRpcProcess.js";
import type { ProcessExit, StdioProcessSpec } from "../kit/stdioProcess.js";
import { StdioRpcError, StdioRpcErrorCode } from "../kit/stdioRpcError.js";
import { piRpcDialect } from "./rpcDialect.js";
import { type PendingDialog, dialogCancel, dialogItem, dialogResponse } from "./uiRequests.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One Loom provider session on Pi (the lifecycle concern): one
 * `pi --mode rpc` process. A Loom run is one `prompt`; a steer is Pi's
 * `steer` command (read before the next model call); an interrupt is
 * `abort`. The turn ends with Pi's `agent_end` (after any queued steering
 * ran), or with the process's end. Exactly one turn.completed per turn.
 */

export interface PiSessionInput {
  readonly spec: StdioProcessSpec;
  /** How long a command may wait for its response. */
  readonly startupTimeoutMs: number;
  readonly cwd: string;
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  /** Runs once after stop(): removes the temp agent dir. */
  readonly cleanup: () => Promise<void>;
  readonly interruptGraceMs?: number;
}

interface ActiveTurn {
  readonly runId: string;
  started: boolean;
  interruptRequested: boolean;
  ended: boolean;
  timer: NodeJS.Timeout | null;
}

const DEFAULT_INTERRUPT_GRACE_MS = 15_000;

export class PiSession implements ProviderSessionRuntime {
  private process: JsonRpcProcess | null = null;
  private sessionId: string | null = null;
  private readonly mapper: PiEventMapper;
  private readonly pending = new Map<string, PendingDialog>();
  private active: ActiveTurn | null = null;
  /** Steering and follow-up messages Pi still holds (queue_update). */
  private queued = 0;
  private closed = false;

  constructor(private readonly input: PiSessionInput) {
    this.mapper = new PiEventMapper(input.cwd);
  }

  /** Starts pi and waits for it to answer get_state (extensions loaded, Loom's tools registered). */
  async open(signal?: AbortSignal): Promise<void> {
    const onAbort = (): void => void this.process?.close();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      signal?.throwIfAborted();
      const process: JsonRpcProcess = new JsonRpcProcess({
        ...this.input.spec,
        label: "pi",
        requestTimeoutMs: this.input.startupTimeoutMs,
        dialect: piRpcDialect,
        onNotification: (message) => this.onMessage(message),
        onRequest: (message) => this.onMessage(message),
        onExit: (exit) => this.onExit(process, exit),
      });
      this.process = process;
      const state = await process.request<{ sessionId?: unknown } | undefined>("get_state", {});
      this.sessionId = typeof state?.sessionId === "string" && state.sessionId !== "" ? state.sessionId : null;
    } catch (error) {
      const tail = this.process?.stderrTail(600) ?? "";
      await this.stop();
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, "opening the pi session was aborted", { cause: error });
      const code = error instanceof StdioRpcError && error.code === StdioRpcErrorCode.spawnFailed ? ProviderErrorCode.notInstalled : ProviderErrorCode.startFailed;
      throw new ProviderError(code, `pi did not start: ${messageOf(error)}${tail === "" ? "" : `; stderr: ${tail}`}`, { cause: error });
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async startTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    if (this.active !== null) throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); steer or interrupt it`);
    const turn: ActiveTurn = { runId: input.runId, started: false, interruptRequested: false, ended: false, timer: null };
    this.mapper.startTurn();
    this.active = turn;
    try {
      await this.requireProcess().request("prompt", { message: input.input });
    } catch (error) {
      if (turn.ended) return;
      if (this.active === turn) this.active = null;
      throw this.providerError(error, "prompt");
    }
    if (!turn.ended) this.ensureStarted(turn);
  }

  async steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    this.activeTurn(input.runId);
    try {
      await this.requireProcess().request("steer", { message: input.input });
    } catch (error) {
      throw this.providerError(error, "steer");
    }
  }

  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.interruptRequested = true;
    try {
      await this.requireProcess().request("abort", {});
    } catch (error) {
      if (turn.ended) return;
      throw this.providerError(error, "abort");
    }
    if (!turn.ended && turn.timer === null) {
      turn.timer = setTimeout(() => this.endTurn(turn, "interrupted", null), this.input.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS);
      turn.timer.unref();
    }
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    try {
      this.assertOpen();
      const pending = this.pending.get(input.requestId);
      if (pending === undefined) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId} in this session`);
      const response = dialogResponse(pending, input.response);
      if (response === null) {
        throw new ProviderError(ProviderErrorCode.protocol, pending.method === "confirm" ? `request ${input.requestId} is an approval: respond with { decision }` : `request ${input.requestId} is a question: respond with { answers }`);
      }
      this.pending.delete(input.requestId);
      this.requireProcess().send(response);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const turn = this.active;
    if (turn !== null) this.endTurn(turn, "interrupted", null);
    const process = this.process;
    this.process = null;
    try {
      // A stop ends pi at once: SIGTERM now, SIGKILL after 3 s.
      await process?.close(0, 3_000);
    } finally {
      await this.input.cleanup();
    }
  }

  private onMessage(message: Record<string, unknown>): void {
    if (this.closed) return;
    const turn = this.active;
    if (message.type === "extension_ui_request") {
      const dialog = dialogItem(message);
      if (dialog === null) return; // notify, setStatus, ...: nothing to answer
      if (turn === null || turn.ended) {
        this.process?.send(dialogCancel(dialog.pending));
        return;
      }
      this.pending.set(dialog.pending.id, dialog.pending);
      this.emit(turn, { type: "item.completed", runId: turn.runId, itemId: dialog.itemId, item: dialog.item });
      return;
    }
    if (message.type === "queue_update") {
      const count = (value: unknown): number => (Array.isArray(value) ? value.length : 0);
      this.queued = count(message.steering) + count(message.followUp);
      return;
    }
    const mapped = this.mapper.map(message, turn?.runId ?? "");
    if (turn === null || turn.ended) return;
    if (message.type === "agent_start") this.ensureStarted(turn);
    for (const event of mapped) this.emit(turn, event);
    // Queued steering starts another agent run in the same turn; the turn ends after the last.
    if (message.type === "agent_end" && (this.queued === 0 || turn.interruptRequested)) {
      const outcome = this.mapper.turnOutcome();
      if (turn.interruptRequested || outcome.stopReason === "aborted") this.endTurn(turn, "interrupted", null);
      else if (outcome.stopReason === "error") this.endTurn(turn, "failed", outcome.error);
      else this.endTurn(turn, "completed", null);
    }
  }

  private onExit(process: JsonRpcProcess, exit: ProcessExit): void {
    if (process !== this.process || this.closed) return;
    this.process = null;
    const turn = this.active;
    if (turn === null) return;
    const how = exit.spawnError ?? (exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`);
    const stderr = process.stderrTail(600);
    this.endTurn(turn, "failed", `pi exited during the turn (${how})${stderr === "" ? "" : `: ${stderr}`}`);
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    this.input.onEvent(event);
  }

  private ensureStarted(turn: ActiveTurn): void {
    if (turn.started) return;
    turn.started = true;
    this.input.onEvent({ type: "turn.started", runId: turn.runId, ...(this.sessionId === null ? {} : { nativeThreadId: this.sessionId }) });
  }

  private endTurn(turn: ActiveTurn, status: "completed" | "failed" | "interrupted", error: string | null): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    turn.ended = true;
    if (turn.timer !== null) clearTimeout(turn.timer);
    if (this.active === turn) this.active = null;
    for (const pending of this.pending.values()) this.process?.send(dialogCancel(pending));
    this.pending.clear();
    this.input.onEvent({ type: "turn.completed", runId: turn.runId, status, error });
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`);
    }
    return turn;
  }

  private requireProcess(): JsonRpcProcess {
    if (this.process === null || !this.process.isRunning) throw new ProviderError(ProviderErrorCode.sessionClosed, "the pi process is not running");
    return this.process;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProviderError(ProviderErrorCode.sessionClosed, "the pi session was stopped");
  }

  private providerError(error: unknown, command: string): ProviderError {
    if (error instanceof ProviderError) return error;
    if (error instanceof StdioRpcError && error.code === StdioRpcErrorCode.closed) return new ProviderError(ProviderErrorCode.sessionClosed, error.message, { cause: error });
    return new ProviderError(ProviderErrorCode.protocol, `${command}: ${messageOf(error)}`, { cause: error });
  }
}
