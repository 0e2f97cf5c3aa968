import { randomUUID } from "node:crypto";
import type { McpServerConfig, Options, Query, SDKMessage, SDKResultMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { NormalizedProviderEvent, ProviderItem, TurnEndStatus } from "../events.js";
import { ClaudeBackgroundTasks } from "./claudeBackgroundTasks.js";
import { ClaudeTranscriptMapper, mapResult, runningCostUsd } from "./claudeEvents.js";
import { ClaudePermissionBroker } from "./permissions.js";
import type { ClaudeQueryHooks } from "./queryOptions.js";
import { LOOM_MCP_SERVER, describeQueryOptions } from "./queryOptions.js";
import { UserMessageStream } from "./userMessageStream.js";

/**
 * One Claude session (the lifecycle concern): one `query()` with streaming
 * input for the session's whole life. A turn start and a steer each push a
 * user message; the turn ends with the result message that consumed the
 * turn's messages (matched by the uuids Claude Code echoes back), or with
 * the process's end.
 */

export type QueryFunction = (params: { prompt: AsyncIterable<SDKUserMessage>; options?: Options }) => Query;

export interface ClaudeSessionInput {
  readonly providerSessionId: string;
  readonly cwd: string;
  readonly query: QueryFunction;
  /** Builds the SDK options around the session's hooks (token included: never log them). */
  readonly buildOptions: (hooks: ClaudeQueryHooks) => Options;
  /** The bearer token: scrubbed from every message this session emits or logs. */
  readonly secret: string | null;
  readonly startupTimeoutMs: number;
  /** After an interrupt, how long the turn may take to report its end before it is ended here. */
  readonly interruptGraceMs?: number;
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  readonly log: (line: string) => void;
  /** A saved Claude Code session to continue at the first launch (OpenSessionInput.resume), or null. */
  readonly resume?: string | null;
  /** Runs once after stop(): removes the session's temp config dir. */
  readonly cleanup: () => Promise<void>;
  /**
   * Whether turns are held to their output schema natively (`outputFormat`).
   * Claude Code takes a schema only when it starts, so a turn whose schema
   * differs from the running launch's restarts Claude Code, continuing its
   * saved session: only a session Claude Code saves (persistSession) may.
   */
  readonly nativeSchema?: boolean;
  /** The output schema of the first launch (OpenSessionInput.outputSchema), when nativeSchema. */
  readonly outputSchema?: OutputSchema | null;
}

type OutputSchema = Readonly<Record<string, unknown>>;

export const DEFAULT_INTERRUPT_GRACE_MS = 15_000;
const STDERR_LINES = 20;

interface ActiveTurn {
  readonly runId: string;
  /** Uuids of the user messages pushed for this turn (its start and its steers). */
  readonly uuids: Set<string>;
  interruptRequested: boolean;
  ended: boolean;
  timer: NodeJS.Timeout | null;
}

interface LiveQuery {
  readonly query: Query;
  readonly input: UserMessageStream;
  readonly abort: AbortController;
  /**
   * Claude Code's session id: the one the launch asked for (`sessionId`), or
   * the one its init message reports if that differs (an executable that
   * ignores --session-id).
   */
  nativeSessionId: string;
  /** The query's running cost total as last reported in a usage event: the next turn's cost counts from it. */
  costReportedUsd: number;
  /** Settles when the message loop ended; never rejects. */
  done: Promise<void>;
  ended: boolean;
  initLogged: boolean;
  /** Why the process ended while the session was open, or null. */
  endReason: string | null;
  /** The schema every turn of this launch answers with (outputFormat), or null. */
  readonly outputSchema: OutputSchema | null;
  /** The saved Claude Code session a relaunch continues: the one it resumed, then its own once a turn ran. */
  continueFrom: string | null;
}

export class ClaudeSession implements ProviderSessionRuntime {
  private readonly permissions: ClaudePermissionBroker;
  private readonly mapper: ClaudeTranscriptMapper;
  private readonly backgroundTasks = new ClaudeBackgroundTasks();
  private readonly stderrTail: string[] = [];
  private live: LiveQuery | null = null;
  private active: ActiveTurn | null = null;
  private closed = false;
  private resumedSession = false;

  /** Whether the first launch continued the saved session it was asked to resume. */
  get resumed(): boolean {
    return this.resumedSession;
  }

  constructor(private input: ClaudeSessionInput) {
    this.mapper = new ClaudeTranscriptMapper(input.cwd);
    this.permissions = new ClaudePermissionBroker(
      (itemId, item) => this.emitRequestItem(itemId, item),
      (toolUseId) => this.mapper.pendingInput(toolUseId),
    );
  }

  /** Starts Claude Code and waits for its initialize answer. Rejects with start_failed or aborted. */
  async open(signal?: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => this.live?.abort.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      signal?.throwIfAborted();
      const live = this.launch(this.input.resume ?? null, this.input.nativeSchema === true ? (this.input.outputSchema ?? null) : null);
      await Promise.race([
        live.query.initializationResult(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no initialize answer within ${this.input.startupTimeoutMs} ms`)), this.input.startupTimeoutMs);
        }),
        live.done.then(() => {
          throw new Error(live.endReason ?? "Claude Code exited during start-up");
        }),
      ]);
      this.resumedSession = (this.input.resume ?? null) !== null;
    } catch (error) {
      await this.stop();
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, "opening the Claude session was aborted", { cause: error });
      throw new ProviderError(ProviderErrorCode.startFailed, `Claude Code did not start: ${this.scrub(messageOf(error))}${this.stderrHint()}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * A warm session (started ahead of need, for no thread: docs/warm-pools.md)
   * becomes one thread's: from now on it logs, reports and relaunches as
   * that thread's session, and Loom's MCP server with the thread's own token
   * is added to the running Claude Code (setMcpServers). Rejects with
   * start_failed when Claude Code cannot connect it.
   */
  async bind(binding: Pick<ClaudeSessionInput, "providerSessionId" | "buildOptions" | "secret" | "onEvent" | "cleanup">, loomServer: McpServerConfig | null): Promise<void> {
    this.assertOpen();
    this.input = { ...this.input, ...binding };
    if (loomServer === null) return;
    const result = await this.currentLive().query.setMcpServers({ [LOOM_MCP_SERVER]: loomServer });
    const error = result.errors[LOOM_MCP_SERVER];
    if (error !== undefined) throw new ProviderError(ProviderErrorCode.startFailed, `Claude Code could not connect Loom's MCP server: ${this.scrub(error)}`);
  }

  startTurn(input: { readonly runId: string; readonly input: string; readonly outputSchema?: OutputSchema }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      if (this.active !== null) {
        throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); steer or interrupt it`);
      }
      const schema = this.input.nativeSchema === true ? (input.outputSchema ?? null) : null;
      const restarted = this.live === null || this.live.ended ? (this.live?.endReason ?? "it was not running") : null;
      if (restarted !== null) this.launch(null, schema);
      else if (!sameSchema(this.currentLive().outputSchema, schema)) this.relaunchFor(schema);
      const uuid = randomUUID();
      const turn: ActiveTurn = { runId: input.runId, uuids: new Set([uuid]), interruptRequested: false, ended: false, timer: null };
      this.active = turn;
      // Claude Code has session ids, not turn ids: a turn is known by the uuids of its user messages, which Loom mints.
      this.emit(turn, { type: "turn.started", runId: turn.runId, nativeThreadId: this.currentLive().nativeSessionId });
      if (restarted !== null) {
        this.emit(turn, {
          type: "item.completed",
          runId: turn.runId,
          itemId: `claude-restart:${uuid}`,
          item: { kind: "error", message: `Claude Code had stopped (${restarted}); this turn runs in a new Claude session without the earlier conversation.` },
        });
      }
      const live = this.currentLive();
      live.input.push(input.input, uuid);
      live.continueFrom = live.nativeSessionId;
    });
  }

  /**
   * Claude Code takes an output schema only when it starts: end the idle
   * process and start one with `schema`, continuing the saved session (none
   * before the first turn, unless the session was opened to resume one).
   */
  private relaunchFor(schema: OutputSchema | null): void {
    const old = this.currentLive();
    this.live = null;
    old.input.close();
    old.query.close();
    old.abort.abort();
    this.input.log(
      `loom: claude: session ${this.input.providerSessionId}: restarting Claude Code ${schema === null ? "without an output schema" : "with the turn's output schema"}${old.continueFrom === null ? "" : `, continuing session ${old.continueFrom}`}`,
    );
    this.launch(old.continueFrom, schema);
  }

  /** Claude Code folds a message that arrives mid-turn into the running turn. */
  steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      const turn = this.activeTurn(input.runId);
      const uuid = randomUUID();
      turn.uuids.add(uuid);
      this.currentLive().input.push(input.input, uuid);
    });
  }

  /** Resolves when Claude Code took the interrupt; the turn's result (or the grace timer) ends it "interrupted". */
  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.interruptRequested = true;
    turn.timer ??= setTimeout(() => this.endTurn(turn, "interrupted", null), this.input.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS);
    this.permissions.abandonAll();
    try {
      await this.currentLive().query.interrupt();
    } catch (error) {
      this.input.log(`loom: claude: session ${this.input.providerSessionId}: interrupt failed: ${this.scrub(messageOf(error))}`);
      this.endTurn(turn, "interrupted", null);
    }
  }

  /** Stops Claude Code's background tasks by task_id (stopTask); each then settles with a task_notification "stopped". */
  async cancelBackgroundTasks(input: { readonly runId: string; readonly taskIds: readonly string[] }): Promise<void> {
    this.assertOpen();
    for (const taskId of input.taskIds) {
      if (!this.backgroundTasks.isRunning(taskId)) continue;
      try {
        await this.currentLive().query.stopTask(taskId);
      } catch (error) {
        // Ended meanwhile, or the process is gone: nothing of it runs.
        this.input.log(`loom: claude: session ${this.input.providerSessionId}: stopping background task ${taskId} failed: ${this.scrub(messageOf(error))}`);
      }
    }
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.permissions.respond(input.requestId, input.response);
    });
  }

  /** Ends a running turn "interrupted" (its last event), then ends Claude Code. Idempotent. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.active !== null) this.endTurn(this.active, "interrupted", null);
    this.permissions.abandonAll();
    const live = this.live;
    if (live !== null) {
      live.input.close();
      live.query.close();
      live.abort.abort();
      await live.done;
    }
    await this.input.cleanup().catch((error: unknown) => {
      this.input.log(`loom: claude: session ${this.input.providerSessionId}: cleanup failed: ${messageOf(error)}`);
    });
  }

  private launch(resume: string | null, outputSchema: OutputSchema | null): LiveQuery {
    const abort = new AbortController();
    const input = new UserMessageStream();
    const sessionId = resume ?? randomUUID();
    const options = this.input.buildOptions({
      canUseTool: this.permissions.canUseTool,
      abortController: abort,
      stderr: (data) => this.keepStderr(data),
      sessionId,
      resume,
      outputSchema,
    });
    this.input.log(`loom: claude: session ${this.input.providerSessionId}: starting Claude Code (${describeQueryOptions(options)})`);
    const query = this.input.query({ prompt: input, options });
    const live: LiveQuery = {
      query,
      input,
      abort,
      nativeSessionId: sessionId,
      costReportedUsd: 0,
      done: Promise.resolve(),
      ended: false,
      initLogged: false,
      endReason: null,
      outputSchema,
      continueFrom: resume,
    };
    live.done = this.consume(live);
    this.live = live;
    this.mapper.reset();
    return live;
  }

  private async consume(live: LiveQuery): Promise<void> {
    let failure: string | null = null;
    try {
      for await (const message of live.query) if (this.live === live) this.onMessage(message);
    } catch (error) {
      failure = this.scrub(messageOf(error));
    }
    live.ended = true;
    if (this.closed || this.live !== live) return;
    live.endReason = failure === null ? "Claude Code exited" : `Claude Code failed: ${failure}`;
    this.input.log(`loom: claude: session ${this.input.providerSessionId}: ${live.endReason}`);
    this.permissions.abandonAll();
    const turn = this.active;
    if (turn !== null) {
      if (turn.interruptRequested) this.endTurn(turn, "interrupted", null);
      else this.endTurn(turn, "failed", `${live.endReason}${this.stderrHint()}`);
    }
  }

  private onMessage(message: SDKMessage): void {
    if (message.type === "system" && message.subtype === "init") {
      // Claude Code repeats init at every turn; once per process is enough.
      if (this.live !== null && !this.live.initLogged) {
        this.live.initLogged = true;
        this.logInit(message.mcp_servers, message.permissionMode);
      }
      if (this.live !== null && message.session_id !== this.live.nativeSessionId) {
        this.input.log(`loom: claude: session ${this.input.providerSessionId}: Claude Code runs session ${message.session_id}, not ${this.live.nativeSessionId}; later turns report it`);
        this.live.nativeSessionId = message.session_id;
      }
      return;
    }
    if (message.type === "system" && message.subtype === "api_retry") {
      const status = message.error_status === null ? "no response" : `HTTP ${message.error_status}`;
      this.input.log(`loom: claude: session ${this.input.providerSessionId}: model API retry ${message.attempt}/${message.max_retries} (${message.error}, ${status})`);
    }
    if (message.type === "result") {
      this.onResult(message);
      return;
    }
    // Background work may end after its turn: its event names the run that started it, not the turn running now.
    const background = this.backgroundTasks.map(message, this.active?.ended === false ? this.active.runId : null);
    if (background !== null) {
      this.input.onEvent(background);
      return;
    }
    const turn = this.active;
    if (turn === null || turn.ended) return;
    for (const event of this.mapper.map(message, turn.runId)) this.emit(turn, event);
  }

  /**
   * A result ends the active turn when it consumed one of the turn's
   * messages. A result for messages of an earlier turn (a steer that came too
   * late to be folded in and ran on its own) is ignored.
   */
  private onResult(result: SDKResultMessage): void {
    const turn = this.active;
    if (turn === null || turn.ended) return;
    const consumed = result.user_message_uuids ?? (result.user_message_uuid === undefined ? null : [result.user_message_uuid]);
    if (consumed !== null && !consumed.some((uuid) => turn.uuids.has(uuid))) return;
    const live = this.live;
    const events = [...this.mapper.resultLimit(result, turn.runId), ...mapResult(result, turn.runId, turn.interruptRequested, live?.costReportedUsd ?? 0)];
    const total = runningCostUsd(result);
    // A result this session ignored (no turn, another turn's) leaves its cost to the next turn's increase.
    if (live !== null && total !== null) live.costReportedUsd = Math.max(live.costReportedUsd, total);
    for (const event of events) {
      if (event.type === "turn.completed") this.endTurn(turn, event.status, event.error);
      else this.emit(turn, event);
    }
  }

  /**
   * Emits turn.completed once. The session is free for the next turn before
   * the event goes out, and requests still waiting are denied, so nothing of
   * this run follows it.
   */
  private endTurn(turn: ActiveTurn, status: TurnEndStatus, error: string | null): void {
    if (turn.ended) return;
    turn.ended = true;
    if (turn.timer !== null) clearTimeout(turn.timer);
    if (this.active === turn) this.active = null;
    this.permissions.abandonAll();
    this.input.onEvent({ type: "turn.completed", runId: turn.runId, status, error: status === "failed" ? this.scrub(error ?? "Claude reported a failure") : null });
  }

  private emitRequestItem(itemId: string, item: ProviderItem): boolean {
    const turn = this.active;
    if (turn === null || turn.ended || turn.interruptRequested) return false;
    this.emit(turn, { type: "item.completed", runId: turn.runId, itemId, item });
    return true;
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (!turn.ended) this.input.onEvent(event);
  }

  private logInit(servers: readonly { readonly name: string; readonly status: string }[], permissionMode: string): void {
    const loom = servers.find((server) => server.name === LOOM_MCP_SERVER);
    const mcp = loom === undefined ? "not configured" : loom.status;
    this.input.log(`loom: claude: session ${this.input.providerSessionId}: Claude Code ready (permission mode ${permissionMode}, Loom MCP server ${mcp})`);
  }

  private keepStderr(data: string): void {
    for (const line of data.split("\n")) {
      if (line.trim() === "") continue;
      this.stderrTail.push(this.scrub(line).slice(0, 500));
      if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
    }
  }

  private stderrHint(): string {
    const last = this.stderrTail.at(-1);
    return last === undefined || last === "" ? "" : ` (stderr: ${last})`;
  }

  /** Messages may reach a model or a log: the session token never does. */
  private scrub(text: string): string {
    const secret = this.input.secret;
    return secret === null || secret === "" ? text : text.split(secret).join("[redacted]");
  }

  private currentLive(): LiveQuery {
    if (this.live === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the Claude session is not running");
    return this.live;
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(
        ProviderErrorCode.turnNotActive,
        turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`,
      );
    }
    return turn;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProviderError(ProviderErrorCode.sessionClosed, "the Claude session was stopped");
  }
}

/** Whether two output schemas are the same JSON (schemas come from the log, so key order is stable). */
function sameSchema(a: OutputSchema | null, b: OutputSchema | null): boolean {
  return a === b || (a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b));
}

/** Runs `body` now and reports its outcome as a promise, so a method never throws synchronously. */
function settle(body: () => void): Promise<void> {
  try {
    body();
    return Promise.resolve();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
