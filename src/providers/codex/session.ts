import type { NormalizedProviderEvent, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { AppServerError, AppServerErrorCode, AppServerProcess } from "./appServerProcess.js";
import type { AppServerExit, AppServerListener } from "./appServerProcess.js";
import { codexResult, loomRequestId, refusal, requestItem, requestItemId } from "./approvals.js";
import { CodexEventMapper } from "./codexEvents.js";
import { type ThreadSettings, threadResumeParams, threadStartParams } from "./codexConfig.js";
import type { InitializeResponse, JsonValue, ServerNotification, ServerRequest, ThreadStartResponse, TurnStartResponse, UserInput } from "./protocol.js";
import { METHOD_NOT_FOUND } from "./protocol.js";
import { codexOutputSchema } from "./outputSchema.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One Loom provider session on codex: the lifecycle concern. It owns one
 * `codex app-server` process and one codex thread; each Loom run is one
 * codex turn. Exactly one turn.completed is emitted per started turn, by
 * `endTurn`: from codex's turn/completed, or by the session itself when the
 * process dies or the session stops.
 *
 * A process that exits between turns is started again on the next turn and
 * the codex thread is resumed from CODEX_HOME (thread/resume, with Loom's MCP
 * server injected again).
 */

export interface CodexSessionSpawn {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly requestTimeoutMs: number;
  /** Never echoed in an error message (the MCP token, API keys). */
  readonly secrets: readonly string[];
}

export interface CodexSessionInput {
  readonly spawn: CodexSessionSpawn;
  readonly thread: ThreadSettings;
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  /** Runs after the process is gone on stop() (removes a temp CODEX_HOME). */
  readonly cleanup: () => Promise<void>;
  /** How long an interrupted turn may take to report itself before the session ends it. */
  readonly interruptGraceMs?: number;
  /**
   * A process already started and initialized ahead of need (a warm pool):
   * open() takes it over instead of spawning one. A warm process that died
   * meanwhile is replaced by a new one, spawned as `spawn` says.
   */
  readonly warm?: AppServerProcess;
}

interface ActiveTurn {
  readonly runId: string;
  /** Codex's turn id, once turn/start answered (or turn/started arrived first). */
  turnId: string | null;
  /** Resolves with the turn id when turn/start answered; rejects when it failed. */
  readonly accepted: Promise<string>;
  ended: boolean;
  interruptTimer: NodeJS.Timeout | null;
}

const CLIENT_INFO = { name: "loom", title: "Loom", version: "0.1.0" } as const;
const DEFAULT_INTERRUPT_GRACE_MS = 15_000;

export class CodexSession implements ProviderSessionRuntime {
  private server: AppServerProcess | null = null;
  private threadId: string | null = null;
  private readonly mapper = new CodexEventMapper();
  /** Approvals and questions waiting for Loom, by Loom request id. */
  private readonly pending = new Map<string, ServerRequest>();
  private active: ActiveTurn | null = null;
  private closed = false;
  private resumedThread = false;

  constructor(private readonly input: CodexSessionInput) {}

  /** Whether open() continued the codex thread it was asked to resume. */
  get resumed(): boolean {
    return this.resumedThread;
  }

  /**
   * Spawn, initialize and start the codex thread, or resume `resumeThreadId`
   * from CODEX_HOME (thread/resume); a thread codex cannot resume (not in this
   * CODEX_HOME) gets a new one instead. Rejects with ProviderError; the
   * process is gone then.
   */
  async open(signal?: AbortSignal, resumeThreadId: string | null = null): Promise<void> {
    const warm = this.input.warm?.isRunning === true ? this.input.warm : null;
    await this.connect(signal, async (server) => {
      if (resumeThreadId !== null) {
        try {
          const resumed = await server.request("thread/resume", threadResumeParams(resumeThreadId, this.input.thread));
          this.resumedThread = true;
          return resumed;
        } catch (error) {
          // Only codex's own refusal (an unknown thread) falls back; a dead or silent process fails the open.
          if (!(error instanceof AppServerError) || error.code !== AppServerErrorCode.rpc) throw error;
        }
      }
      return server.request("thread/start", threadStartParams(this.input.thread));
    }, warm);
  }

  async startTurn(input: { readonly runId: string; readonly input: string; readonly outputSchema?: Readonly<Record<string, unknown>> }): Promise<void> {
    this.assertOpen();
    if (this.active !== null) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); steer or interrupt it`);
    }
    let accept: (turnId: string) => void = () => undefined;
    let fail: (error: unknown) => void = () => undefined;
    const accepted = new Promise<string>((resolve, reject) => {
      accept = resolve;
      fail = reject;
    });
    accepted.catch(() => undefined); // steer and interrupt await it; nobody else may
    const turn: ActiveTurn = { runId: input.runId, turnId: null, accepted, ended: false, interruptTimer: null };
    this.active = turn;
    try {
      const server = await this.liveServer();
      const outputSchema = codexOutputSchema(input.outputSchema);
      const params = { threadId: this.requireThread(), input: textInput(input.input), ...(outputSchema === null ? {} : { outputSchema: outputSchema as JsonValue }) };
      const response = await server.request<"turn/start", TurnStartResponse>("turn/start", params);
      turn.turnId ??= response.turn.id;
      accept(turn.turnId);
    } catch (error) {
      fail(error);
      // The process died after reporting the turn: its turn.completed "failed" is already out.
      if (turn.ended) return;
      if (this.active === turn) this.active = null;
      throw this.providerError(error, "turn/start");
    }
  }

  /** turn/steer: the input joins the running turn and reaches the model with its next request. */
  async steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    const turnId = await this.acceptedTurnId(turn);
    try {
      await this.requireServer().request("turn/steer", { threadId: this.requireThread(), expectedTurnId: turnId, input: textInput(input.input) });
    } catch (error) {
      throw this.providerError(error, "turn/steer");
    }
  }

  /** turn/interrupt; codex then reports the turn "interrupted". If it does not, the session ends the turn itself. */
  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    const turnId = await this.acceptedTurnId(turn);
    try {
      await this.requireServer().request("turn/interrupt", { threadId: this.requireThread(), turnId });
    } catch (error) {
      if (turn.ended) return; // it finished while the request was in flight
      throw this.providerError(error, "turn/interrupt");
    }
    if (!turn.ended && turn.interruptTimer === null) {
      turn.interruptTimer = setTimeout(() => this.endTurn(turn, { type: "turn.completed", runId: turn.runId, status: "interrupted", error: null }), this.input.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS);
      turn.interruptTimer.unref();
    }
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    try {
      this.assertOpen();
      const request = this.pending.get(input.requestId);
      if (request === undefined) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId} in this session`);
      const result = codexResult(request, input.response);
      this.pending.delete(input.requestId);
      this.requireServer().respond(request.id, result);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Ends a running turn ("interrupted", the last event), kills the process, removes a temp CODEX_HOME. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const turn = this.active;
    if (turn !== null) this.endTurn(turn, { type: "turn.completed", runId: turn.runId, status: "interrupted", error: null });
    const server = this.server;
    this.server = null;
    try {
      await server?.close();
    } finally {
      await this.input.cleanup();
    }
  }

  /** The process if it runs; otherwise a new one with the codex thread resumed. */
  private async liveServer(): Promise<AppServerProcess> {
    if (this.server?.isRunning === true) return this.server;
    const threadId = this.requireThread();
    return this.connect(undefined, (server) => server.request("thread/resume", threadResumeParams(threadId, this.input.thread)));
  }

  /** A new process (or the warm one, already initialized) with this session's thread opened on it. */
  private async connect(signal: AbortSignal | undefined, openThread: (server: AppServerProcess) => Promise<unknown>, warm: AppServerProcess | null = null): Promise<AppServerProcess> {
    const listener = (target: () => AppServerProcess): AppServerListener => ({
      onNotification: (notification) => this.onNotification(target(), notification),
      onRequest: (request) => this.onRequest(target(), request),
      onExit: (exit) => this.onExit(target(), exit),
    });
    let server: AppServerProcess;
    if (warm === null) {
      server = new AppServerProcess({ ...this.input.spawn, ...listener(() => server) });
    } else {
      server = warm;
      warm.handTo(listener(() => warm), this.input.spawn.secrets);
    }
    this.server = server;
    const abort = (): void => void server.close(0);
    signal?.addEventListener("abort", abort, { once: true });
    try {
      signal?.throwIfAborted();
      if (warm === null) await initialize(server);
      const opened = (await openThread(server)) as ThreadStartResponse;
      this.threadId = opened.thread.id;
      return server;
    } catch (error) {
      await server.close(0);
      if (this.server === server) this.server = null;
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, "opening the codex session was aborted", { cause: error });
      const detail = server.stderrTail(600);
      const code = error instanceof AppServerError && error.code === AppServerErrorCode.spawnFailed ? ProviderErrorCode.notInstalled : ProviderErrorCode.startFailed;
      throw new ProviderError(code, `codex app-server did not start: ${messageOf(error)}${detail === "" ? "" : `; stderr: ${detail}`}`, { cause: error });
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  private onNotification(server: AppServerProcess, notification: ServerNotification): void {
    if (server !== this.server) return;
    const params = notification.params as { threadId?: unknown; turnId?: unknown; turn?: { id?: unknown }; requestId?: unknown } | undefined;
    if (typeof params?.threadId === "string" && this.threadId !== null && params.threadId !== this.threadId) return;
    if (notification.method === "serverRequest/resolved") {
      this.pending.delete(loomRequestId(notification.params.requestId));
      return;
    }
    const turn = this.active;
    if (turn === null || turn.ended) return;
    const turnId = typeof params?.turnId === "string" ? params.turnId : typeof params?.turn?.id === "string" ? params.turn.id : null;
    if (turnId !== null) {
      if (turn.turnId === null) {
        // Until turn/started (or turn/start's answer) names this turn, a turn id is an earlier
        // turn's: a resumed thread reports its last turn's token usage. Adopting it would drop
        // every notification of this turn as late.
        if (notification.method !== "turn/started") return;
        turn.turnId = turnId;
      } else if (turnId !== turn.turnId) return; // a late notification of an earlier turn
    }
    for (const event of this.mapper.map(notification, turn.runId)) {
      if (event.type === "turn.completed") this.endTurn(turn, event);
      else this.emit(turn, event);
    }
  }

  private onRequest(server: AppServerProcess, request: ServerRequest): void {
    const params = request.params as { itemId?: unknown };
    const item = requestItem(request, typeof params.itemId === "string" ? this.mapper.startedItem(params.itemId) : undefined);
    const turn = this.active;
    if (item === null) {
      server.respondError(request.id, METHOD_NOT_FOUND, refusal(request));
      return;
    }
    if (turn === null || turn.ended || server !== this.server) {
      // Nobody can answer outside a turn: cancel rather than leave codex waiting.
      server.respond(request.id, codexResult(request, { dismissed: true }));
      return;
    }
    this.pending.set(loomRequestId(request.id), request);
    this.emit(turn, { type: "item.completed", runId: turn.runId, itemId: requestItemId(request.id), item });
  }

  private onExit(server: AppServerProcess, exit: AppServerExit): void {
    if (server !== this.server || this.closed) return;
    this.server = null;
    const turn = this.active;
    if (turn === null) return;
    const how = exit.spawnError ?? (exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`);
    const stderr = server.stderrTail(600);
    this.endTurn(turn, { type: "turn.completed", runId: turn.runId, status: "failed", error: `codex app-server exited during the turn (${how})${stderr === "" ? "" : `: ${stderr}`}` });
  }

  /** Emits turn.completed once; the session is free for the next turn before it goes out. */
  private endTurn(turn: ActiveTurn, event: NormalizedProviderEvent & { type: "turn.completed" }): void {
    if (turn.ended) return;
    turn.ended = true;
    if (turn.interruptTimer !== null) clearTimeout(turn.interruptTimer);
    if (this.active === turn) this.active = null;
    this.pending.clear();
    this.input.onEvent(event);
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (!turn.ended) this.input.onEvent(event);
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`);
    }
    return turn;
  }

  /** Codex's id for the turn, once turn/start was accepted; a turn that never started is not active. */
  private async acceptedTurnId(turn: ActiveTurn): Promise<string> {
    try {
      return await turn.accepted;
    } catch (error) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, `run ${turn.runId} did not start: ${messageOf(error)}`, { cause: error });
    }
  }

  private requireServer(): AppServerProcess {
    if (this.server === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the codex app-server process is not running");
    return this.server;
  }

  private requireThread(): string {
    if (this.threadId === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the codex session has no thread");
    return this.threadId;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProviderError(ProviderErrorCode.sessionClosed, "the codex session was stopped");
  }

  /** A transport failure as a ProviderError: "no active turn" is turn_not_active, a dead process session_closed. */
  private providerError(error: unknown, method: string): ProviderError {
    if (error instanceof ProviderError) return error;
    if (error instanceof AppServerError) {
      if (error.code === AppServerErrorCode.rpc && /no active turn/i.test(error.message)) return new ProviderError(ProviderErrorCode.turnNotActive, error.message, { cause: error });
      if (error.code === AppServerErrorCode.closed) return new ProviderError(ProviderErrorCode.sessionClosed, error.message, { cause: error });
    }
    return new ProviderError(ProviderErrorCode.protocol, `${method}: ${messageOf(error)}`, { cause: error });
  }
}

/** The handshake every app-server process needs before its first thread. */
export async function initialize(server: AppServerProcess): Promise<void> {
  await server.request<"initialize", InitializeResponse>("initialize", { clientInfo: CLIENT_INFO, capabilities: { experimentalApi: false, requestAttestation: false } });
  server.notify("initialized");
}

function textInput(text: string): UserInput[] {
  return [{ type: "text", text, text_elements: [] }];
}
