import { setTimeout as delay } from "node:timers/promises";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime, WarmBinding, WarmProviderSession } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { NormalizedProviderEvent, ProviderItem } from "../events.js";
import { ScriptedMcpClient } from "./mcpClient.js";
import { BackgroundShells } from "./backgroundShells.js";
import { optionsForSession, optionsOrNull } from "../kit/driverOptions.js";
import { DEFAULT_SCRIPTED_CAPABILITIES, SCRIPTED_DRIVER, ScriptedOptionsSchema, scriptedOptions } from "./options.js";
import type { ScriptedOptions } from "./options.js";
import { PendingRequests } from "./pendingRequests.js";
import { runTurn } from "./runner.js";
import type { TurnEnd } from "./runner.js";
import type { ScriptStep } from "./script.js";

/**
 * The `scripted` driver: a deterministic agent with no model behind it. A
 * turn whose input is `{"script":[...]}` runs those steps (say, call a Loom
 * MCP tool over real HTTP, ask, approve, write, run, sleep, fail); any other
 * input is echoed. Integration tests drive Loom with it, and it is how a
 * user tries Loom without an agent installed (docs/scripted-driver.md).
 */

export { SCRIPTED_DRIVER } from "./options.js";

export const scriptedDriver: ProviderDriver = {
  driver: SCRIPTED_DRIVER,
  optionsSchema: ScriptedOptionsSchema,

  /** Bad options fall back to the defaults here; probe() reports them. */
  capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
    return (
      optionsOrNull(scriptedOptions, instance)?.capabilities ?? {
        ...DEFAULT_SCRIPTED_CAPABILITIES,
        models: instance.models ?? DEFAULT_SCRIPTED_CAPABILITIES.models,
      }
    );
  },

  /** Nothing to install or log in to; invalid options make the probe throw with their message. */
  probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
    try {
      scriptedOptions.parse(instance);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return Promise.resolve({ installed: true, authenticated: true, reason: null });
  },

  async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
    const options: ScriptedOptions = optionsForSession(scriptedOptions, input.instance);
    if (!options.capabilities.runtimeModes.includes(input.runtimeMode)) {
      throw new ProviderError(
        ProviderErrorCode.unsupported,
        `scripted instance "${input.instance.id}" does not offer runtime mode ${input.runtimeMode}`,
      );
    }
    await startUp(options, input.signal);
    return new ScriptedSession(input, options);
  },

  /** The start-up (startupDelayMs) is paid ahead; the session takes its thread, cwd and credential when bound. */
  async openWarm({ instance, signal }): Promise<WarmProviderSession> {
    const options: ScriptedOptions = optionsForSession(scriptedOptions, instance);
    await startUp(options, signal);
    let state: "warm" | "bound" | "stopped" = "warm";
    return {
      fits: (binding) => options.capabilities.runtimeModes.includes(binding.runtimeMode),
      bind: (binding: WarmBinding) => {
        if (state !== "warm") return Promise.reject(new ProviderError(ProviderErrorCode.sessionClosed, `this warm session was already ${state}`));
        state = "bound";
        return Promise.resolve(new ScriptedSession({ ...binding, instance, resume: null }, options));
      },
      stop: () => {
        if (state === "warm") state = "stopped";
        return Promise.resolve();
      },
    };
  },
};

/** What opening a scripted session costs: its configured start-up delay. */
async function startUp(options: ScriptedOptions, signal: AbortSignal | undefined): Promise<void> {
  try {
    signal?.throwIfAborted();
    if (options.startupDelayMs > 0) {
      await delay(options.startupDelayMs, undefined, { signal });
    }
  } catch (error) {
    throw new ProviderError(ProviderErrorCode.aborted, "opening the scripted session was aborted", { cause: error });
  }
}

interface ActiveTurn {
  readonly runId: string;
  readonly controller: AbortController;
  /** Characters of the turn's input and steers, and of its assistant messages: the usage event counts them. */
  inputChars: number;
  outputChars: number;
  /** Settles when the runner has stopped; never rejects. */
  done: Promise<void>;
  /** Set once turn.completed was emitted: nothing for this run follows it. */
  ended: boolean;
}

/**
 * One open scripted session: the lifecycle concern. At most one turn runs at
 * a time. turn.completed is emitted exactly once per turn, by `endTurn`,
 * whether the script finished, failed or was interrupted.
 */
export class ScriptedSession implements ProviderSessionRuntime {
  private readonly requests = new PendingRequests();
  /** Left by a `next` step: what the next turn that is not a script runs instead of the echo. */
  private nextSteps: readonly ScriptStep[] | null = null;
  private readonly mcp: ScriptedMcpClient | null;
  private readonly onEvent: (event: NormalizedProviderEvent) => void;
  private readonly cwd: string;
  private active: ActiveTurn | null = null;
  private readonly background: BackgroundShells;
  private itemCounter = 0;
  private turnCounter = 0;
  private closed = false;
  /** The "native" conversation id a real provider would report: derived from Loom's session id, or the resumed one. */
  private readonly nativeThreadId: string;
  readonly resumed: boolean;

  constructor(
    input: OpenSessionInput,
    private readonly options: ScriptedOptions,
  ) {
    const resume = options.capabilities.resume ? (input.resume ?? null) : null;
    this.nativeThreadId = resume?.nativeThreadId ?? `scripted:${input.providerSessionId}`;
    this.resumed = resume !== null;
    this.cwd = input.cwd;
    this.onEvent = input.onEvent;
    const reachable = input.mcp !== null && options.capabilities.mcpTransport === "http";
    this.mcp = reachable && input.mcp !== null ? new ScriptedMcpClient(input.mcp) : null;
    this.background = new BackgroundShells({ cwd: input.cwd, timeoutMs: options.commandTimeoutMs, emit: (event) => this.onEvent(event) });
  }

  startTurn(input: {
    readonly runId: string;
    readonly input: string;
    readonly env?: Readonly<Record<string, string>>;
    readonly outputSchema?: Readonly<Record<string, unknown>>;
  }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      if (this.active !== null) {
        throw new ProviderError(
          ProviderErrorCode.turnNotActive,
          `a turn is already running (run ${this.active.runId}); steer or interrupt it`,
        );
      }
      const turn: ActiveTurn = {
        runId: input.runId,
        controller: new AbortController(),
        inputChars: input.input.length,
        outputChars: 0,
        done: Promise.resolve(),
        ended: false,
      };
      this.active = turn;
      this.turnCounter += 1;
      this.emit(turn, { type: "turn.started", runId: turn.runId, nativeThreadId: this.nativeThreadId, nativeTurnId: `${this.nativeThreadId}:turn-${this.turnCounter}` });
      turn.done = this.drive(turn, input.input, input.env ?? {}, input.outputSchema ?? null);
    });
  }

  /** Steering is deterministic: it is acknowledged with an assistant message and the script goes on. */
  steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      if (!this.options.capabilities.steering) {
        throw new ProviderError(ProviderErrorCode.unsupported, "this scripted instance does not support steering");
      }
      const turn = this.activeTurn(input.runId);
      turn.inputChars += input.input.length;
      this.emitItem(turn, { kind: "assistant_message", text: `Steered: ${input.input}` });
    });
  }

  /** Resolves after turn.completed "interrupted" was emitted and the running step stopped. */
  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    this.assertOpen();
    if (!this.options.capabilities.interrupt) {
      throw new ProviderError(ProviderErrorCode.unsupported, "this scripted instance does not support interrupting");
    }
    const turn = this.activeTurn(input.runId);
    this.endTurn(turn, { status: "interrupted" });
    await turn.done;
  }

  respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.requests.respond(input.requestId, input.response);
    });
  }

  /** Kills the background shells the session's turns left running; each is reported ended. */
  async cancelBackgroundTasks(input: { readonly runId: string; readonly taskIds: readonly string[] }): Promise<void> {
    this.assertOpen();
    await this.background.cancel(input.taskIds);
  }

  /** Interrupts a running turn (its turn.completed is the last event), kills its background shells, then closes the MCP client. */
  async stop(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.background.stopAll();
    const turn = this.active;
    if (turn !== null) {
      this.endTurn(turn, { status: "interrupted" });
      await turn.done;
    }
    await this.mcp?.close();
  }

  private async drive(turn: ActiveTurn, input: string, env: Readonly<Record<string, string>>, outputSchema: Readonly<Record<string, unknown>> | null): Promise<void> {
    let end: TurnEnd;
    try {
      end = await runTurn(input, {
        cwd: this.cwd,
        env,
        signal: turn.controller.signal,
        commandTimeoutMs: this.options.commandTimeoutMs,
        turnDelayMs: this.options.turnDelayMs,
        outputSchema,
        requests: this.requests,
        tools: this.mcp,
        emitItem: (item, itemId) => this.emitItem(turn, item, itemId),
        startBackground: (command, kind, awaited) => {
          if (!turn.ended) this.background.start(turn.runId, command, kind, awaited, env);
        },
        nextItemId: () => this.nextItemId(),
        emitOutput: (itemId, text, command) => this.emit(turn, { type: "item.output", runId: turn.runId, itemId, text, command }),
        emitDelta: (itemId, text) => this.emit(turn, { type: "item.delta", runId: turn.runId, itemId, text }),
        setNextSteps: (steps) => {
          this.nextSteps = steps;
        },
        takeNextSteps: () => {
          const steps = this.nextSteps;
          this.nextSteps = null;
          return steps;
        },
      });
    } catch (error) {
      end = { status: "failed", error: `scripted turn failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    this.endTurn(turn, end);
  }

  /**
   * Emits the turn's usage, then turn.completed, once. The session is free
   * for the next turn before they go out, and whatever still waits is
   * aborted first, so nothing of this run can follow them.
   */
  private endTurn(turn: ActiveTurn, end: TurnEnd): void {
    if (turn.ended) return;
    turn.ended = true;
    if (this.active === turn) this.active = null;
    turn.controller.abort();
    // Between turns the agent holds no MCP connection; the next call opens one.
    void this.mcp?.release();
    const inputTokens = scriptedTokens(turn.inputChars);
    const outputTokens = scriptedTokens(turn.outputChars);
    const rate = this.options.costPerTokenUsd;
    this.onEvent({ type: "usage", runId: turn.runId, inputTokens, outputTokens, ...(rate === null ? {} : { costUsd: (inputTokens + outputTokens) * rate }) });
    this.onEvent({
      type: "turn.completed",
      runId: turn.runId,
      status: end.status,
      error: end.status === "failed" ? end.error : null,
    });
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

  private emitItem(turn: ActiveTurn, item: ProviderItem, itemId?: string): void {
    if (turn.ended) return;
    if (item.kind === "assistant_message") turn.outputChars += item.text.length;
    this.emit(turn, { type: "item.completed", runId: turn.runId, itemId: itemId ?? this.nextItemId(), item });
  }

  private nextItemId(): string {
    this.itemCounter += 1;
    return `item-${this.itemCounter}`;
  }

  private emit(turn: ActiveTurn, event: NormalizedProviderEvent): void {
    if (!turn.ended) this.onEvent(event);
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new ProviderError(ProviderErrorCode.sessionClosed, "the scripted session was stopped");
    }
  }
}

/**
 * Deterministic token counts for budgets to be tested against: one token per
 * started 4 characters (UTF-16 code units) of text.
 */
export function scriptedTokens(chars: number): number {
  return Math.ceil(chars / 4);
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
