import type { InitializeResponse, McpServer, NewSessionResponse, PromptResponse, RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { PROTOCOL_VERSION, RequestError } from "@agentclientprotocol/sdk/unstable";
import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { NormalizedProviderEvent, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { AcpTurnMapper } from "./acpEvents.js";
import { acpPromptLimit } from "./acpLimits.js";
import { limitEvent } from "../kit/limitSignals.js";
import type { ProcessExit } from "../kit/stdioProcess.js";
import { StdioRpcError, StdioRpcErrorCode } from "../kit/stdioRpcError.js";
import { AgentProcess } from "./agentProcess.js";
import { type AdvertisedFacts, factsFromInitialize, modelOption, withSessionFacts } from "./capabilities.js";
import type { AcpExtensionRequest, AcpFlavor } from "./flavor.js";
import { CANCELLED, allowOutcome, approvalItem, approvesByItself, permissionOutcome } from "./permissions.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One Loom provider session on an ACP agent: the lifecycle concern. It owns
 * one agent process and one ACP session; each Loom run is one
 * `session/prompt`. Exactly one turn.completed is emitted per started turn:
 * when the prompt answers, when the process dies, after an unanswered
 * cancel, or on stop.
 *
 * A process that exits between turns is started again on the next turn; the
 * ACP session is loaded again (session/load) when the agent advertises it,
 * else the turn runs in a new session and says so in an error item.
 */

export interface AcpLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

export interface AcpSessionInput {
  readonly launch: AcpLaunch;
  readonly flavor: AcpFlavor;
  /** The agent's working directory and the ACP session's cwd (absolute). */
  readonly cwd: string;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly model: string | null;
  /** Loom's MCP endpoint and this session's token: only ever in session/new (load, fork) headers. */
  readonly mcp: { readonly url: string; readonly token: string } | null;
  readonly mcpServerName: string;
  readonly authMethod: string | null;
  readonly requestTimeoutMs: number;
  readonly interruptGraceMs: number;
  /** Strings never echoed in an error or log (the MCP token, API keys). */
  readonly secrets: readonly string[];
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  /** What the agent advertised, whenever it (re)connects: feeds the capability record. */
  readonly onFacts: (facts: AdvertisedFacts) => void;
  readonly log: (line: string) => void;
}

interface ActiveTurn {
  readonly runId: string;
  readonly mapper: AcpTurnMapper;
  cancelRequested: boolean;
  ended: boolean;
  timer: NodeJS.Timeout | null;
}

interface PendingRequest {
  readonly answer: (response: unknown) => unknown;
  readonly cancelled: unknown;
  readonly resolve: (result: unknown) => void;
}

const CLIENT_INFO = { name: "loom", title: "Loom", version: "0.1.0" } as const;

export class AcpSession implements ProviderSessionRuntime {
  private agent: AgentProcess | null = null;
  private sessionId: string | null = null;
  private facts: AdvertisedFacts | null = null;
  private active: ActiveTurn | null = null;
  /** The agent's latest available_commands_update, and the key of the list last recorded as a notice. */
  private commands: Extract<SessionUpdate, { sessionUpdate: "available_commands_update" }> | null = null;
  private recordedCommands: string | null = null;
  private readonly pending = new Map<string, PendingRequest>();
  private requestCount = 0;
  private closed = false;
  private resumedSession = false;

  constructor(private readonly input: AcpSessionInput) {}

  /**
   * Spawn, initialize and open the ACP session. Rejects with ProviderError;
   * the process is gone then. `resumeSessionId`: the ACP session an earlier
   * Loom session of the thread recorded (OpenSessionInput.resume), loaded
   * with session/load when the agent advertises it; if it cannot be loaded,
   * a new session opens and `resumed` stays false (Loom then gives the first
   * turn a recap).
   */
  async open(signal?: AbortSignal, resumeSessionId: string | null = null): Promise<void> {
    await this.connect(signal, null, resumeSessionId);
  }

  /** Whether open() continued the ACP session it was asked to resume. */
  get resumed(): boolean {
    return this.resumedSession;
  }

  /** The ACP session id (for logs and tests). */
  get acpSessionId(): string | null {
    return this.sessionId;
  }

  async startTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    if (this.active !== null) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); interrupt it first`);
    }
    const turn: ActiveTurn = { runId: input.runId, mapper: new AcpTurnMapper(input.runId, this.input.cwd), cancelRequested: false, ended: false, timer: null };
    this.active = turn;
    let notice: string | null = null;
    try {
      if (this.agent?.isRunning !== true) notice = await this.reconnect();
    } catch (error) {
      if (this.active === turn) this.active = null;
      throw error;
    }
    this.emit({ type: "turn.started", runId: turn.runId, nativeThreadId: this.requireSession() });
    if (notice !== null) this.emit({ type: "item.completed", runId: turn.runId, itemId: `${turn.runId}:restart`, item: { kind: "error", message: notice } });
    this.recordCommands();
    const agent = this.requireAgent();
    const prompt = agent.request<PromptResponse>("session/prompt", { sessionId: this.requireSession(), prompt: [{ type: "text", text: input.input }] }, null);
    prompt.then(
      (response) => this.endTurn(turn, turn.cancelRequested ? { interrupted: true } : { response }),
      (error: unknown) => {
        if (turn.cancelRequested || this.closed) {
          this.endTurn(turn, { interrupted: true });
          return;
        }
        // The connection closes before the process reports its exit: wait briefly, so the failure says how it ended.
        void agent.whenExited(2_000).then((exit) => {
          if (turn.cancelRequested || this.closed) this.endTurn(turn, { interrupted: true });
          else {
            const limit = exit === null ? acpPromptLimit(error, Date.now()) : null;
            if (limit !== null && !turn.ended) this.emit(limitEvent(turn.runId, limit));
            this.endTurn(turn, { failed: this.failure(agent, exit === null ? messageOf(error) : `the prompt was lost: ${agent.describeExit(exit)}`) });
          }
        });
      },
    );
  }

  /** ACP has no steering: Loom restarts the turn instead (capabilities.steering is false). */
  steerTurn(_input: { readonly runId: string; readonly input: string }): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    return Promise.reject(new ProviderError(ProviderErrorCode.unsupported, "ACP agents cannot be steered mid-turn; Loom interrupts the turn and sends the message again"));
  }

  /** session/cancel; the prompt then answers "cancelled". If it does not within the grace period, the session ends the turn itself. */
  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.cancelRequested = true;
    // ACP: the client answers every open permission request "cancelled" after session/cancel.
    this.cancelPending();
    const agent = this.agent;
    if (agent === null) {
      // The process is gone and its prompt with it: nothing is left to cancel.
      this.endTurn(turn, { interrupted: true });
      return;
    }
    await agent.notify("session/cancel", { sessionId: this.requireSession() });
    if (!turn.ended && turn.timer === null) {
      turn.timer = setTimeout(() => this.endTurn(turn, { interrupted: true }), this.input.interruptGraceMs);
      turn.timer.unref();
    }
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    try {
      this.assertOpen();
      const request = this.pending.get(input.requestId);
      if (request === undefined) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId} in this session`);
      const result = request.answer(input.response);
      this.pending.delete(input.requestId);
      request.resolve(result);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Ends a running turn "interrupted" (the last event), answers open requests "cancelled", ends the process. Idempotent. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const turn = this.active;
    if (turn !== null) this.endTurn(turn, { interrupted: true });
    this.cancelPending();
    const agent = this.agent;
    this.agent = null;
    await agent?.close();
  }

  /**
   * Native session/fork (when the agent advertises it): a new ACP session on
   * the same process with this one's history, Loom's MCP server injected.
   * Resolves with the new ACP session id.
   */
  async forkNative(): Promise<string> {
    this.assertOpen();
    if (this.facts?.fork !== true || !this.input.flavor.nativeFork) {
      throw new ProviderError(ProviderErrorCode.unsupported, `${this.input.flavor.label} sessions are not forked natively here; Loom forks with portable context instead`);
    }
    try {
      const forked = await this.requireAgent().request<NewSessionResponse>("session/fork", { sessionId: this.requireSession(), cwd: this.input.cwd, mcpServers: this.mcpServers() }, this.input.requestTimeoutMs);
      return forked.sessionId;
    } catch (error) {
      throw this.providerError(error, "session/fork");
    }
  }

  /** A new process after the old one died; the notice tells the model what was lost, or null. */
  private async reconnect(): Promise<string | null> {
    const previous = this.sessionId;
    const canLoad = previous !== null && this.facts?.loadSession === true;
    await this.connect(undefined, canLoad ? previous : null);
    if (previous === null || canLoad) return null;
    return "The agent process had stopped and this agent cannot load a session, so this turn runs in a new session without the earlier conversation.";
  }

  private async connect(signal: AbortSignal | undefined, loadSessionId: string | null, resumeSessionId: string | null = null): Promise<void> {
    const { launch } = this.input;
    const agent: AgentProcess = new AgentProcess({
      command: launch.command,
      args: launch.args,
      env: launch.env,
      cwd: this.input.cwd,
      secrets: this.input.secrets,
      onUpdate: (notification) => this.onUpdate(agent, notification),
      onPermission: (request) => this.onPermission(agent, request),
      extensionMethods: this.input.flavor.extensions.flatMap((extension) => extension.methods),
      onExtension: (method, params) => this.onExtension(agent, method, params),
      onExit: (exit) => this.onExit(agent, exit),
    });
    this.agent = agent;
    const abort = (): void => void agent.close(0);
    signal?.addEventListener("abort", abort, { once: true });
    const timeout = this.input.requestTimeoutMs;
    try {
      signal?.throwIfAborted();
      const init = await agent.request<InitializeResponse>(
        "initialize",
        { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: CLIENT_INFO },
        timeout,
      );
      const previous = this.facts;
      let facts = factsFromInitialize(init);
      // mcpServers() reads what this process advertised.
      this.facts = facts;
      if (this.input.authMethod !== null) await agent.request("authenticate", { methodId: this.input.authMethod }, timeout);
      const mcpServers = this.mcpServers();
      if (loadSessionId !== null) {
        const loaded = await agent.request<NewSessionResponse | null>("session/load", { sessionId: loadSessionId, cwd: this.input.cwd, mcpServers }, timeout);
        const reloaded = withSessionFacts(facts, { sessionId: loadSessionId, ...(loaded ?? {}) });
        // A load answer may leave models and modes out: what session/new advertised still holds.
        facts = { ...reloaded, models: reloaded.models.length > 0 ? reloaded.models : (previous?.models ?? []), modes: reloaded.modes.length > 0 ? reloaded.modes : (previous?.modes ?? []) };
      } else if (resumeSessionId !== null && facts.loadSession && (await this.resume(agent, resumeSessionId, facts))) {
        facts = this.facts ?? facts;
      } else {
        const created = await agent.request<NewSessionResponse>("session/new", { cwd: this.input.cwd, mcpServers }, timeout);
        this.sessionId = created.sessionId;
        facts = withSessionFacts(facts, created);
        await this.applySettings(agent, created, facts);
      }
      this.facts = facts;
      this.input.onFacts(facts);
      this.input.log(`loom: acp: ${facts.agent ?? launch.command} ready (session ${this.sessionId ?? "?"}, Loom MCP server ${this.describeMcp(facts)})`);
    } catch (error) {
      await agent.close(0);
      if (this.agent === agent) this.agent = null;
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, `opening the ${this.input.flavor.label} session was aborted`, { cause: error });
      const detail = agent.stderrTail(600);
      const code = error instanceof StdioRpcError && error.code === StdioRpcErrorCode.spawnFailed ? ProviderErrorCode.notInstalled : authCode(error);
      throw new ProviderError(code, `${this.input.flavor.label} did not start: ${messageOf(error)}${detail === "" ? "" : `; stderr: ${detail}`}`, { cause: error });
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  /**
   * session/load of an earlier Loom session's ACP session, with Loom's MCP
   * server injected again. False (logged) when the agent cannot load it: the
   * caller opens a new session instead.
   */
  private async resume(agent: AgentProcess, sessionId: string, facts: AdvertisedFacts): Promise<boolean> {
    try {
      const loaded = await agent.request<NewSessionResponse | null>("session/load", { sessionId, cwd: this.input.cwd, mcpServers: this.mcpServers() }, this.input.requestTimeoutMs);
      const answer = { sessionId, ...(loaded ?? {}) };
      const withSession = withSessionFacts(facts, answer);
      this.sessionId = sessionId;
      this.facts = withSession;
      this.resumedSession = true;
      // A load answer may leave the models out: the thread's model is then the one the session already runs.
      if (this.input.model === null || withSession.models.length > 0) await this.applySettings(agent, answer, withSession);
      return true;
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      this.input.log(`loom: acp: the agent could not load session ${sessionId} (${messageOf(error)}); a new session starts`);
      return false;
    }
  }

  /** The thread's model and plan mode, where the agent offers them. */
  private async applySettings(agent: AgentProcess, created: NewSessionResponse, facts: AdvertisedFacts): Promise<void> {
    const sessionId = created.sessionId;
    const model = this.input.model;
    if (model !== null) {
      if (!facts.models.includes(model)) {
        const offered = facts.models.length === 0 ? "it advertises no models" : `it offers ${facts.models.join(", ")}`;
        throw new ProviderError(ProviderErrorCode.startFailed, `the agent cannot run model "${model}": ${offered}`);
      }
      const option = modelOption(created.configOptions ?? []);
      if (option !== null && option.values.includes(model)) {
        await agent.request("session/set_config_option", { sessionId, configId: option.id, value: model }, this.input.requestTimeoutMs);
      } else {
        await agent.request("session/set_model", { sessionId, modelId: model }, this.input.requestTimeoutMs);
      }
    }
    if (this.input.interactionMode === "plan") {
      if (facts.modes.includes("plan")) await agent.request("session/set_mode", { sessionId, modeId: "plan" }, this.input.requestTimeoutMs);
      else this.input.log(`loom: acp: the agent has no "plan" mode; the thread's plan interaction mode is not enforced by it`);
    }
  }

  /** Loom's MCP server as ACP describes it; empty when there is none or the agent cannot take HTTP servers. */
  private mcpServers(): McpServer[] {
    const mcp = this.input.mcp;
    if (mcp === null || this.facts?.mcpHttp !== true) return [];
    return [{ type: "http", name: this.input.mcpServerName, url: mcp.url, headers: [{ name: "Authorization", value: `Bearer ${mcp.token}` }] }];
  }

  private describeMcp(facts: AdvertisedFacts): string {
    if (this.input.mcp === null) return "not configured";
    return facts.mcpHttp ? `injected as ${this.input.mcpServerName}` : "not injected: the agent does not advertise MCP over HTTP";
  }

  private onUpdate(agent: AgentProcess, notification: SessionNotification): void {
    if (agent !== this.agent) return;
    const update = notification.update;
    // Agents send their commands as soon as a session exists, possibly before session/new has answered.
    if (update.sessionUpdate === "available_commands_update" && (this.sessionId === null || notification.sessionId === this.sessionId)) {
      this.commands = update;
      this.recordCommands();
      return;
    }
    if (notification.sessionId !== this.sessionId) return;
    const turn = this.active;
    if (turn === null || turn.ended) return;
    for (const event of turn.mapper.map(notification.update)) this.emit(event);
  }

  /**
   * The agent's command list as a system_notice in the running turn, once per
   * change: a list that arrives between turns (agents send it right after
   * session/new) goes into the next turn, and an unchanged one is not repeated.
   */
  private recordCommands(): void {
    const turn = this.active;
    if (this.commands === null || turn === null || turn.ended) return;
    const key = JSON.stringify(this.commands.availableCommands.map((command) => [command.name, command.description, command.input?.hint ?? null]));
    if (key === this.recordedCommands) return;
    this.recordedCommands = key;
    for (const event of turn.mapper.map(this.commands)) this.emit(event);
  }

  private onPermission(agent: AgentProcess, request: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    const turn = this.active;
    // Nobody can answer outside a running turn: cancel rather than leave the agent waiting.
    if (agent !== this.agent || turn === null || turn.ended || turn.cancelRequested || request.sessionId !== this.sessionId) return Promise.resolve(CANCELLED);
    const known = turn.mapper.toolCall(request.toolCall.toolCallId);
    if (approvesByItself(this.input.runtimeMode, request.toolCall.kind ?? known?.kind)) return Promise.resolve(allowOutcome(request.options));
    const requestId = this.nextRequestId("permission");
    const item = approvalItem(requestId, request, known);
    return this.ask(turn, requestId, item, (response) => permissionOutcome(requestId, request.options, response), CANCELLED) as Promise<RequestPermissionResponse>;
  }

  private onExtension(agent: AgentProcess, method: string, params: unknown): Promise<unknown> {
    const extension = this.input.flavor.extensions.find((candidate) => candidate.methods.includes(method));
    if (extension === undefined) return Promise.reject(RequestError.methodNotFound(method));
    const turn = this.active;
    if (agent !== this.agent || turn === null || turn.ended || turn.cancelRequested) return Promise.resolve(extension.cancelled(method));
    const requestId = this.nextRequestId("extension");
    const item = extension.item(method, params, requestId);
    if (item === null) return Promise.reject(RequestError.invalidParams(undefined, `Loom cannot read the ${method} request`));
    return this.ask(turn, requestId, item, (response) => answerExtension(extension, method, params, response), extension.cancelled(method));
  }

  /** Records the request item and waits for respondToRequest (or a cancel). */
  private ask(turn: ActiveTurn, requestId: string, item: NonNullable<ReturnType<AcpExtensionRequest["item"]>>, answer: (response: unknown) => unknown, cancelled: unknown): Promise<unknown> {
    return new Promise((resolve) => {
      this.pending.set(requestId, { answer, cancelled, resolve });
      this.emit({ type: "item.completed", runId: turn.runId, itemId: `request:${requestId}`, item });
    });
  }

  private nextRequestId(kind: string): string {
    this.requestCount += 1;
    return `acp-${kind}-${this.requestCount}`;
  }

  private cancelPending(): void {
    for (const request of this.pending.values()) request.resolve(request.cancelled);
    this.pending.clear();
  }

  private onExit(agent: AgentProcess, exit: ProcessExit): void {
    if (agent !== this.agent) return;
    this.agent = null;
    this.cancelPending();
    if (!this.closed && this.active === null) {
      this.input.log(`loom: acp: the agent exited between turns (${exit.signal ?? `code ${String(exit.code)}`}); the next turn starts it again`);
    }
    // A running turn ends through its session/prompt, which the closed connection rejects.
  }

  /** Emits the turn's closing events once; the session is free for the next turn before they go out. */
  private endTurn(turn: ActiveTurn, outcome: Parameters<AcpTurnMapper["finish"]>[0]): void {
    if (turn.ended) return;
    turn.ended = true;
    if (turn.timer !== null) clearTimeout(turn.timer);
    if (this.active === turn) this.active = null;
    this.cancelPending();
    const events = turn.mapper.finish(outcome);
    // After stop() only the closing turn.completed goes out.
    for (const event of events) if (!this.closed || event.type === "turn.completed") this.input.onEvent(event);
  }

  private emit(event: NormalizedProviderEvent): void {
    if (!this.closed) this.input.onEvent(event);
  }

  private failure(agent: AgentProcess, message: string): string {
    const stderr = agent.stderrTail(600);
    return `${message}${stderr === "" ? "" : `; stderr: ${stderr}`}`;
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`);
    }
    return turn;
  }

  private requireAgent(): AgentProcess {
    if (this.agent === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the ACP agent process is not running");
    return this.agent;
  }

  private requireSession(): string {
    if (this.sessionId === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the ACP session was not opened");
    return this.sessionId;
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }

  private providerError(error: unknown, method: string): ProviderError {
    if (error instanceof ProviderError) return error;
    if (error instanceof StdioRpcError && error.code === StdioRpcErrorCode.closed) return new ProviderError(ProviderErrorCode.sessionClosed, error.message, { cause: error });
    return new ProviderError(ProviderErrorCode.protocol, `${method}: ${messageOf(error)}`, { cause: error });
  }
}

function answerExtension(extension: AcpExtensionRequest, method: string, params: unknown, response: unknown): unknown {
  return extension.result(method, params, response);
}

/** ACP's "authentication required" error (-32000) means the agent runs but is not logged in. */
function authCode(error: unknown): ProviderErrorCode {
  if (error instanceof ProviderError) return error.code;
  return error instanceof StdioRpcError && error.rpcCode === -32000 ? ProviderErrorCode.notAuthenticated : ProviderErrorCode.startFailed;
}

function closedError(): ProviderError {
  return new ProviderError(ProviderErrorCode.sessionClosed, "the ACP session was stopped");
}
