import type { Event, OpencodeClient } from "@opencode-ai/sdk/v2";
import { createOpencodeClient } from "@opencode-ai/sdk/v2/client";
import type { ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { basicAuthHeader } from "./opencodeConfig.js";
import { OpencodeEventMapper } from "./opencodeEvents.js";
import { type PendingRequest, answerFor, permissionItem, questionItem } from "./requests.js";
import type { LaunchOpencodeServer, LaunchSpec, OpencodeServerHandle, ServerExit } from "./serverProcess.js";
import { OpencodeStartError, scrub } from "./serverProcess.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One Loom provider session on OpenCode (the lifecycle concern): one
 * `opencode serve` process with one OpenCode session, so the session's MCP
 * bearer token lives in that process alone. Each Loom run is one OpenCode
 * prompt; a steer is another prompt into the busy session, which OpenCode's
 * running loop reads before its next model request. A turn ends when the
 * session goes idle with every prompt of the turn answered (or after an
 * abort or an error). Exactly one turn.completed per started turn, from
 * `endTurn`.
 */

export interface OpencodeSessionInput {
  readonly launch: LaunchOpencodeServer;
  readonly spec: LaunchSpec;
  readonly password: string;
  readonly cwd: string;
  /** The model of every prompt, or null for the config's. */
  readonly model: { readonly providerID: string; readonly modelID: string } | null;
  readonly agent: "plan" | "build";
  /** Sent as the system text of the session's first prompt (orchestration instructions), or null. */
  readonly firstTurnSystem: string | null;
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  /** Runs once after stop(): removes the temp HOME. */
  readonly cleanup: () => Promise<void>;
  readonly interruptGraceMs?: number;
}

interface ActiveTurn {
  readonly runId: string;
  /** Prompts sent for this turn (its start and its steers). */
  sent: number;
  started: boolean;
  interruptRequested: boolean;
  ended: boolean;
  timer: NodeJS.Timeout | null;
}

const DEFAULT_INTERRUPT_GRACE_MS = 15_000;
const SESSION_TITLE = "Loom";

export class OpencodeSession implements ProviderSessionRuntime {
  private server: OpencodeServerHandle | null = null;
  private client: OpencodeClient | null = null;
  private sessionId: string | null = null;
  private readonly mapper: OpencodeEventMapper;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly events = new AbortController();
  private active: ActiveTurn | null = null;
  private closed = false;
  private prompts = 0;

  constructor(private readonly input: OpencodeSessionInput) {
    this.mapper = new OpencodeEventMapper(input.cwd);
  }

  /** Starts `opencode serve`, follows its events and creates the OpenCode session. Rejects with ProviderError. */
  async open(signal?: AbortSignal): Promise<void> {
    try {
      this.server = await this.input.launch(this.input.spec, signal);
      const server = this.server;
      this.client = createOpencodeClient({ baseUrl: server.url, directory: this.input.cwd, headers: { Authorization: basicAuthHeader(this.input.password) } });
      await this.follow(this.client, this.input.spec.startupTimeoutMs);
      signal?.throwIfAborted();
      const created = await this.client.session.create({ title: SESSION_TITLE });
      if (created.data === undefined) throw new Error(`session.create failed: ${describe(created.error)}`);
      this.sessionId = created.data.id;
      void server.exited.then((exit) => this.onExit(server, exit));
    } catch (error) {
      const tail = this.server?.stderrTail(600) ?? "";
      await this.stop();
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, "opening the opencode session was aborted", { cause: error });
      const code = error instanceof OpencodeStartError && error.notInstalled ? ProviderErrorCode.notInstalled : ProviderErrorCode.startFailed;
      const detail = error instanceof OpencodeStartError || tail === "" ? "" : `; stderr: ${tail}`;
      throw new ProviderError(code, `opencode did not start: ${this.scrub(messageOf(error))}${detail}`, { cause: error });
    }
  }

  async startTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    if (this.active !== null) throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); steer or interrupt it`);
    const turn: ActiveTurn = { runId: input.runId, sent: 1, started: false, interruptRequested: false, ended: false, timer: null };
    this.mapper.startTurn();
    this.active = turn;
    try {
      await this.prompt(input.input);
    } catch (error) {
      if (this.active === turn) this.active = null;
      throw error;
    }
  }

  /** Another prompt into the busy session: OpenCode's loop reads it before its next model request. */
  async steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.sent += 1;
    try {
      await this.prompt(input.input);
    } catch (error) {
      turn.sent -= 1;
      throw error;
    }
  }

  /** session.abort; the session goes idle and the turn ends "interrupted" (or after a grace period, here). */
  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.interruptRequested = true;
    const result = await this.requireClient().session.abort({ sessionID: this.requireSession() });
    if (result.error !== undefined && !turn.ended) throw new ProviderError(ProviderErrorCode.protocol, `session.abort failed: ${describe(result.error)}`);
    if (!turn.ended && turn.timer === null) {
      turn.timer = setTimeout(() => this.endTurn(turn, "interrupted", null), this.input.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS);
      turn.timer.unref();
    }
  }

  async respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    this.assertOpen();
    const pending = this.pending.get(input.requestId);
    if (pending === undefined) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId} in this session`);
    const answer = answerFor(pending, input.response);
    if (answer === null) {
      throw new ProviderError(ProviderErrorCode.protocol, pending.kind === "permission" ? `request ${input.requestId} is an approval: respond with { decision }` : `request ${input.requestId} is a question: respond with { answers }`);
    }
    this.pending.delete(input.requestId);
    const client = this.requireClient();
    const result =
      answer.kind === "permission"
        ? await client.permission.reply({ requestID: answer.id, reply: answer.reply })
        : answer.kind === "question-reply"
          ? await client.question.reply({ requestID: answer.id, answers: answer.answers })
          : await client.question.reject({ requestID: answer.id });
    if (result.error !== undefined) throw new ProviderError(ProviderErrorCode.protocol, `answering ${input.requestId} failed: ${describe(result.error)}`);
  }

  /** Ends a running turn ("interrupted", its last event), kills the process, removes the temp HOME. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const turn = this.active;
    if (turn !== null) this.endTurn(turn, "interrupted", null);
    this.events.abort();
    const server = this.server;
    this.server = null;
    try {
      await server?.close();
    } finally {
      await this.input.cleanup();
    }
  }

  private async prompt(text: string): Promise<void> {
    const first = this.prompts === 0;
    this.prompts += 1;
    const result = await this.requireClient().session.promptAsync({
      sessionID: this.requireSession(),
      parts: [{ type: "text", text }],
      agent: this.input.agent,
      ...(this.input.model === null ? {} : { model: this.input.model }),
      ...(first && this.input.firstTurnSystem !== null ? { system: this.input.firstTurnSystem } : {}),
    });
    if (result.error !== undefined || (result.response !== undefined && !result.response.ok)) {
      throw new ProviderError(ProviderErrorCode.protocol, `prompt failed: ${describe(result.error ?? result.response?.status)}`);
    }
  }

  /** Subscribes to the server's events and resolves once the subscription is live (server.connected). */
  private async follow(client: OpencodeClient, timeoutMs: number): Promise<void> {
    const subscription = await client.event.subscribe(undefined, { signal: this.events.signal });
    let connected: () => void = () => undefined;
    const live = new Promise<void>((resolve) => (connected = resolve));
    void (async () => {
      try {
        for await (const event of subscription.stream) {
          if (event.type === "server.connected") connected();
          this.onNativeEvent(event);
        }
      } catch {
        // The stream ends when the session stops or the process dies; onExit reports a dead process.
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        live,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no event stream within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private onNativeEvent(event: Event): void {
    if (this.closed || this.sessionId === null) return;
    const properties = event.properties as { sessionID?: unknown };
    if (properties.sessionID !== this.sessionId) return;
    const turn = this.active;
    switch (event.type) {
      case "permission.asked":
      case "question.asked": {
        const request = event.type === "permission.asked" ? permissionItem(event.properties) : questionItem(event.properties);
        if (turn === null || turn.ended) {
          // Nobody can answer outside a turn: refuse rather than leave OpenCode waiting.
          void this.refuse(request.pending);
          return;
        }
        this.pending.set(request.pending.id, request.pending);
        this.emit(turn, { type: "item.completed", runId: turn.runId, itemId: request.itemId, item: request.item });
        return;
      }
      case "permission.replied":
      case "question.replied":
      case "question.rejected":
        this.pending.delete(event.properties.requestID);
        return;
      case "session.idle":
        if (turn !== null) this.maybeEndTurn(turn);
        return;
      default:
        break;
    }
    const mapped = this.mapper.map(event, turn?.runId ?? "");
    if (turn === null || turn.ended) return;
    // The turn runs once OpenCode took its prompt (Loom's run leaves "starting" then, so it can be steered).
    if ((event.type === "message.updated" && event.properties.info.role === "user") || event.type === "session.status") this.ensureStarted(turn);
    for (const normalized of mapped) this.emit(turn, normalized);
  }

  /** The session went idle: the turn ends once every prompt of it was answered, or after an abort or an error. */
  private maybeEndTurn(turn: ActiveTurn): void {
    const error = this.mapper.error();
    if (turn.interruptRequested) return this.endTurn(turn, "interrupted", null);
    const answered = this.mapper.userMessagesSeen() >= turn.sent && this.mapper.allAnswered();
    if (error !== null && !answered) return this.endTurn(turn, "failed", error);
    if (answered) this.endTurn(turn, error === null ? "completed" : "failed", error);
  }

  private onExit(server: OpencodeServerHandle, exit: ServerExit): void {
    if (server !== this.server || this.closed) return;
    this.server = null;
    this.events.abort();
    const turn = this.active;
    if (turn === null) return;
    const how = exit.spawnError ?? (exit.signal !== null ? `signal ${exit.signal}` : `exit code ${String(exit.code)}`);
    const stderr = server.stderrTail(600);
    this.endTurn(turn, "failed", `opencode exited during the turn (${how})${stderr === "" ? "" : `: ${stderr}`}`);
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    this.input.onEvent(event);
  }

  /** turn.started goes out before the turn's first item, with OpenCode's session and first user message ids. */
  private ensureStarted(turn: ActiveTurn): void {
    if (turn.started) return;
    turn.started = true;
    const nativeTurnId = this.mapper.firstUserMessageId();
    this.input.onEvent({
      type: "turn.started",
      runId: turn.runId,
      ...(this.sessionId === null ? {} : { nativeThreadId: this.sessionId }),
      ...(nativeTurnId === undefined ? {} : { nativeTurnId }),
    });
  }

  private endTurn(turn: ActiveTurn, status: "completed" | "failed" | "interrupted", error: string | null): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    turn.ended = true;
    if (turn.timer !== null) clearTimeout(turn.timer);
    if (this.active === turn) this.active = null;
    for (const pending of this.pending.values()) void this.refuse(pending);
    this.pending.clear();
    this.input.onEvent({ type: "turn.completed", runId: turn.runId, status, error: error === null ? null : this.scrub(error) });
  }

  private async refuse(pending: PendingRequest): Promise<void> {
    const client = this.client;
    if (client === null || this.closed) return;
    try {
      if (pending.kind === "permission") await client.permission.reply({ requestID: pending.id, reply: "reject" });
      else await client.question.reject({ requestID: pending.id });
    } catch {
      // The process is going away; nothing waits for this answer any more.
    }
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`);
    }
    return turn;
  }

  private requireClient(): OpencodeClient {
    if (this.client === null || this.server === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the opencode server is not running");
    return this.client;
  }

  private requireSession(): string {
    if (this.sessionId === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the opencode session has no OpenCode session");
    return this.sessionId;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProviderError(ProviderErrorCode.sessionClosed, "the opencode session was stopped");
  }

  private scrub(text: string): string {
    return scrub(text, [...this.input.spec.secrets, this.input.password]);
  }
}

function describe(error: unknown): string {
  if (error === undefined || error === null) return "no answer";
  if (typeof error === "string" || typeof error === "number") return String(error);
  return JSON.stringify(error).slice(0, 500);
}
