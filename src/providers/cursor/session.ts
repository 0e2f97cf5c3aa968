import type { AgentOptions, Run, SDKAgent, SendOptions } from "@cursor/sdk";
import type { ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { describeAgentOptions } from "./agentOptions.js";
import { CursorEventMapper } from "./cursorEvents.js";
import { cursorErrorLimit, cursorRunLimit } from "./cursorLimits.js";
import { limitEvent } from "../kit/limitSignals.js";
import { CursorQuestions, QUESTION_TOOL } from "./questions.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * One Loom provider session on the Cursor SDK (the lifecycle concern): one
 * local agent (`Agent.create`, or `Agent.resume` of the agent an earlier
 * session of the thread ran, which the SDK keeps); each Loom run is one `agent.send` and the
 * run's stream. A steer goes to `run.steer`; when the SDK hands it back
 * ("revert_to_followup", or a run without steer), it is sent as the next
 * `send` of the same Loom turn, so the input still lands in this run. An
 * interrupt is `run.cancel`. Exactly one turn.completed per turn.
 */

/** The part of the SDK the session uses (its public `Agent.create` and `Agent.resume`); tests pass a fake built from the published types. */
export interface CursorSdk {
  readonly Agent: {
    create(options: AgentOptions): Promise<SDKAgent>;
    resume(agentId: string, options?: Partial<AgentOptions>): Promise<SDKAgent>;
  };
}

export interface CursorSessionInput {
  readonly sdk: CursorSdk;
  /** Agent options without the custom tools, which the session adds (its question tool). */
  readonly createOptions: (customTools: NonNullable<AgentOptions["local"]>["customTools"]) => AgentOptions;
  readonly sendOptions: SendOptions;
  readonly cwd: string;
  readonly startupTimeoutMs: number;
  readonly onEvent: (event: NormalizedProviderEvent) => void;
  /** Redacted diagnostics only (describeAgentOptions). */
  readonly log: (line: string) => void;
  /** Never echoed in an error message. */
  readonly secrets: readonly string[];
}

interface ActiveTurn {
  readonly runId: string;
  run: Run | null;
  /** Steers the SDK handed back, sent as follow-ups of this turn. */
  readonly followUps: string[];
  started: boolean;
  interruptRequested: boolean;
  ended: boolean;
}

export class CursorSession implements ProviderSessionRuntime {
  private agent: SDKAgent | null = null;
  private readonly mapper: CursorEventMapper;
  private readonly questions: CursorQuestions;
  private active: ActiveTurn | null = null;
  private closed = false;
  private resumedAgent = false;

  constructor(private readonly input: CursorSessionInput) {
    this.mapper = new CursorEventMapper(input.cwd);
    this.questions = new CursorQuestions({
      ask: (itemId, item) => {
        const turn = this.active;
        if (turn === null || turn.ended) return false;
        this.emit(turn, { type: "item.completed", runId: turn.runId, itemId, item });
        return true;
      },
    });
  }

  /**
   * Create the local agent, or resume `resumeAgentId` (the agent an earlier
   * Loom session of the thread ran) with the same options, Loom's MCP server
   * included: the SDK does not keep MCP servers or custom tools on the agent.
   * An agent that cannot be resumed is logged and a new one is created
   * (`resumed` stays false; Loom then gives the first turn a recap). Rejects
   * with ProviderError.
   */
  async open(signal?: AbortSignal, resumeAgentId: string | null = null): Promise<void> {
    const options = this.input.createOptions({ [QUESTION_TOOL]: this.questions.tool() });
    try {
      signal?.throwIfAborted();
      if (resumeAgentId !== null) {
        this.input.log(`cursor: Agent.resume ${resumeAgentId} ${JSON.stringify(describeAgentOptions(options))}`);
        try {
          this.agent = await this.withTimeout(this.input.sdk.Agent.resume(resumeAgentId, options), "Agent.resume");
          this.resumedAgent = true;
          return;
        } catch (error) {
          if (signal?.aborted === true || isAuthError(error)) throw error;
          this.input.log(`cursor: agent ${resumeAgentId} could not be resumed (${this.scrub(messageOf(error))}); a new agent starts`);
        }
      }
      this.input.log(`cursor: Agent.create ${JSON.stringify(describeAgentOptions(options))}`);
      this.agent = await this.withTimeout(this.input.sdk.Agent.create(options), "Agent.create");
    } catch (error) {
      if (signal?.aborted === true) throw new ProviderError(ProviderErrorCode.aborted, "opening the cursor session was aborted", { cause: error });
      throw new ProviderError(isAuthError(error) ? ProviderErrorCode.notAuthenticated : ProviderErrorCode.startFailed, `the Cursor agent did not start: ${this.scrub(messageOf(error))}`, { cause: error });
    }
  }

  /** Whether open() resumed the agent it was asked to. */
  get resumed(): boolean {
    return this.resumedAgent;
  }

  private async withTimeout<T>(pending: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        pending,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what} did not answer within ${this.input.startupTimeoutMs} ms`)), this.input.startupTimeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async startTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    if (this.active !== null) throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.active.runId}); steer or interrupt it`);
    const turn: ActiveTurn = { runId: input.runId, run: null, followUps: [], started: false, interruptRequested: false, ended: false };
    this.mapper.startTurn();
    this.active = turn;
    let run: Run;
    try {
      run = await this.send(input.input);
    } catch (error) {
      if (this.active === turn) this.active = null;
      throw error;
    }
    turn.run = run;
    this.ensureStarted(turn);
    void this.follow(turn, run);
  }

  async steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    const run = turn.run;
    if (run?.steer !== undefined && run.status === "running") {
      try {
        if ((await run.steer(input.input)) === "complete_delivered") return;
      } catch {
        // The run could not take it (it is finishing): it becomes a follow-up below.
      }
    }
    if (!turn.ended) turn.followUps.push(input.input);
  }

  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    const turn = this.activeTurn(input.runId);
    turn.interruptRequested = true;
    turn.followUps.length = 0;
    this.questions.dismissAll();
    try {
      await turn.run?.cancel();
    } catch (error) {
      if (!turn.ended) throw new ProviderError(ProviderErrorCode.protocol, `run.cancel failed: ${this.scrub(messageOf(error))}`, { cause: error });
    }
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    try {
      this.assertOpen();
      if (!this.questions.isPending(input.requestId)) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId} in this session`);
      if (!this.questions.answer(input.requestId, input.response)) throw new ProviderError(ProviderErrorCode.protocol, `request ${input.requestId} is a question: respond with { answers }`);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const turn = this.active;
    if (turn !== null) {
      this.endTurn(turn, "interrupted", null);
      await turn.run?.cancel().catch(() => undefined);
    }
    this.agent?.close();
    this.agent = null;
  }

  private async send(text: string): Promise<Run> {
    const agent = this.agent;
    if (agent === null) throw new ProviderError(ProviderErrorCode.sessionClosed, "the Cursor agent is closed");
    try {
      return await agent.send(text, this.input.sendOptions);
    } catch (error) {
      throw new ProviderError(ProviderErrorCode.protocol, `agent.send failed: ${this.scrub(messageOf(error))}`, { cause: error });
    }
  }

  /** Streams one run, then the turn's follow-ups, then ends the turn from the last run's result. */
  private async follow(turn: ActiveTurn, first: Run): Promise<void> {
    let run = first;
    try {
      for (;;) {
        for await (const message of run.stream()) {
          if (turn.ended) return;
          for (const event of this.mapper.map(message, turn.runId)) this.emit(turn, event);
        }
        const result = await run.wait();
        if (turn.ended) return;
        if (turn.interruptRequested || result.status === "cancelled") return this.endTurn(turn, "interrupted", null);
        if (result.status === "error") {
          const limit = result.error === undefined ? null : cursorRunLimit(result.error);
          if (limit !== null) this.emit(turn, limitEvent(turn.runId, { ...limit, message: this.scrub(limit.message) }));
          return this.endTurn(turn, "failed", result.error?.message ?? "the Cursor run failed");
        }
        const next = turn.followUps.shift();
        if (next === undefined) return this.endTurn(turn, "completed", null);
        run = await this.send(next);
        turn.run = run;
      }
    } catch (error) {
      const limit = turn.interruptRequested ? null : cursorErrorLimit(error);
      if (limit !== null) this.emit(turn, limitEvent(turn.runId, { ...limit, message: this.scrub(limit.message) }));
      if (!turn.ended) this.endTurn(turn, turn.interruptRequested ? "interrupted" : "failed", turn.interruptRequested ? null : `the Cursor run failed: ${messageOf(error)}`);
    }
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    this.input.onEvent(event);
  }

  private ensureStarted(turn: ActiveTurn): void {
    if (turn.started) return;
    turn.started = true;
    this.input.onEvent({
      type: "turn.started",
      runId: turn.runId,
      ...(this.agent === null ? {} : { nativeThreadId: this.agent.agentId }),
      ...(turn.run === null ? {} : { nativeTurnId: turn.run.id }),
    });
  }

  private endTurn(turn: ActiveTurn, status: "completed" | "failed" | "interrupted", error: string | null): void {
    if (turn.ended) return;
    this.ensureStarted(turn);
    turn.ended = true;
    if (this.active === turn) this.active = null;
    this.questions.dismissAll();
    this.input.onEvent({ type: "turn.completed", runId: turn.runId, status, error: error === null ? null : this.scrub(error) });
  }

  private activeTurn(runId: string): ActiveTurn {
    const turn = this.active;
    if (turn === null || turn.runId !== runId) {
      throw new ProviderError(ProviderErrorCode.turnNotActive, turn === null ? `no turn is running (run ${runId})` : `run ${runId} is not the running turn (${turn.runId} is)`);
    }
    return turn;
  }

  private assertOpen(): void {
    if (this.closed) throw new ProviderError(ProviderErrorCode.sessionClosed, "the cursor session was stopped");
  }

  private scrub(text: string): string {
    let out = text;
    for (const secret of this.input.secrets) if (secret.length >= 6) out = out.replaceAll(secret, "[redacted]");
    return out;
  }
}

/** The SDK's AuthenticationError: a missing or rejected credential. */
function isAuthError(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "AuthenticationError";
}
