import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { NormalizedProviderEvent, ProviderItem } from "../../contracts/providerEvents.js";
import { type OpenSessionInput, ProviderError, ProviderErrorCode, type ProviderDriver, type ProviderProbe, type ProviderSessionRuntime } from "../../providers/adapter.js";
import type { AgentCaller } from "../../app/caller.js";
import type { SimRandom } from "./random.js";
import type { SimScheduler, TimerOwner } from "./scheduler.js";

/** The simulated provider: a real ProviderDriver whose agent is the simulation's seeded brain. */
export const SIM_DRIVER = "sim";

export const SimDriverOptions = z.object({ steering: z.boolean().default(true), interrupt: z.boolean().default(true) }).strict();

/** The methods of a session the fault table can make fail. */
export type DriverCall = "openSession" | "startTurn" | "steerTurn" | "interruptTurn" | "respondToRequest" | "stop";

/** What a turn of the simulated agent does, step by step; planned from the seed when the turn starts. */
export type TurnStep =
  | { readonly kind: "say"; readonly delayMs: number }
  | { readonly kind: "usage"; readonly delayMs: number }
  | { readonly kind: "ask"; readonly delayMs: number }
  | { readonly kind: "approve"; readonly delayMs: number }
  | { readonly kind: "agent"; readonly delayMs: number; readonly op: string }
  | { readonly kind: "end"; readonly delayMs: number; readonly how: TurnEnd };

/** completed / failed: turn.completed so; hang: nothing more (the idle reaper ends it); die: the process dies mid-turn. */
export type TurnEnd = "completed" | "failed" | "hang" | "die" | "limited";

/** Who the agent is when it calls Loom during a turn. */
export interface AgentContext {
  readonly caller: AgentCaller;
  readonly threadId: string;
  readonly runId: string;
}

/** Text an agent received from Loom: a turn's input or a steer. The ground truth of what reached a model. */
export interface ReceivedInput {
  readonly threadId: string;
  readonly runId: string;
  readonly providerSessionId: string;
  readonly kind: "start" | "steer";
  readonly text: string;
  readonly at: number;
}

/** What the simulated provider needs from the world around it. */
export interface SimProviderHost {
  readonly rng: SimRandom;
  readonly scheduler: SimScheduler;
  /** Something happened (the runner's quiescence measure). */
  activity(): void;
  /** A provider latency in ms for one event or answer. */
  latency(): number;
  /** A seeded failure for this call, or null. */
  callFault(call: DriverCall): ProviderError | null;
  /** Extra ms this call takes (a stalled provider), usually 0. */
  callDelay(call: DriverCall): number;
  /** Probability that an event is delivered out of order or late. */
  reorderChance(): number;
  planTurn(agent: AgentContext, input: string): readonly TurnStep[];
  /** Run one agent operation (an app call); resolves with a short result for the tool item. */
  runAgentOp(op: string, agent: AgentContext): Promise<string>;
  received(input: ReceivedInput): void;
  violation(invariant: string, message: string): void;
  /** A line for the run's trace (only kept with --trace). */
  note(line: string): void;
}

/** A turn's use so far (cumulative, as the adapter contract says): output a quarter of input, and a cost of $0.01 per thousand tokens. */
function usageOf(runId: string, tokens: number): NormalizedProviderEvent {
  const outputTokens = tokens >> 2;
  return { type: "usage", runId, inputTokens: tokens, outputTokens, costUsd: (tokens + outputTokens) / 100_000 };
}

/** Which live session has a turn of which run: no run may be driven by two sessions. */
export class SimProviderLedger {
  private readonly turns = new Map<string, Set<SimSession>>();
  readonly live = new Set<SimSession>();

  constructor(private readonly host: SimProviderHost) {}

  turnStarted(runId: string, session: SimSession): void {
    const driving = this.turns.get(runId) ?? new Set<SimSession>();
    const others = [...driving].filter((other) => other !== session && other.isLive());
    if (others.length > 0) {
      this.host.violation("run-driven-once", `run ${runId} started on session ${session.providerSessionId} while session ${others[0]!.providerSessionId} still drives it`);
    }
    driving.add(session);
    this.turns.set(runId, driving);
  }

  turnEnded(runId: string, session: SimSession): void {
    this.turns.get(runId)?.delete(session);
  }
}

/** One node incarnation's instance of the driver: its sessions die with the node. */
export class SimDriver implements ProviderDriver {
  readonly driver = SIM_DRIVER;
  readonly optionsSchema = SimDriverOptions;
  private readonly sessions = new Set<SimSession>();
  private dead = false;

  constructor(
    private readonly host: SimProviderHost,
    private readonly ledger: SimProviderLedger,
    readonly owner: TimerOwner,
    private readonly environmentId: string,
  ) {}

  capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
    const options = SimDriverOptions.parse(instance.options);
    return {
      steering: options.steering,
      interrupt: options.interrupt,
      restart: options.interrupt,
      fork: false,
      // A simulated agent keeps no conversation: continuing one is free (no recap).
      resume: true,
      runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
      models: instance.models ?? ["sim-1"],
      mcpTransport: "http",
    };
  }

  probe(): Promise<ProviderProbe> {
    return Promise.resolve({ installed: true, authenticated: true, reason: null });
  }

  async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
    this.host.activity();
    await this.host.scheduler.sleep(this.owner, this.host.latency() + this.host.callDelay("openSession"));
    const fault = this.host.callFault("openSession");
    if (fault !== null) throw fault;
    const session = new SimSession(this.host, this.ledger, this.owner, input, this.capabilities(input.instance), this.environmentId);
    if (this.dead) session.kill();
    this.sessions.add(session);
    this.ledger.live.add(session);
    return session;
  }

  /** The node died: every provider process it spawned dies with it, silently. */
  kill(): void {
    this.dead = true;
    for (const session of this.sessions) session.kill();
  }
}

interface SimTurn {
  readonly runId: string;
  readonly nativeTurnId: string;
  ended: boolean;
  interruptRequested: boolean;
  /** Open requests of this turn by native request id. */
  readonly waiting: Map<string, (answered: boolean) => void>;
}

/**
 * One simulated provider process. Events go out after seeded latencies, in
 * order for the session (the adapter contract) unless the reorder fault
 * shuffles an item or delivers a straggler after the turn's end. Exactly one
 * turn.completed per turn, except for a turn that hangs or whose process is
 * killed with its node.
 */
export class SimSession implements ProviderSessionRuntime {
  readonly providerSessionId: string;
  readonly threadId: string;
  private readonly onEvent: (event: NormalizedProviderEvent) => void;
  private readonly caller: AgentCaller;
  private turn: SimTurn | null = null;
  private lastEmitAt = 0;
  private counter = 0;
  /** The process died (a crash of its own, or its node's): calls fail session_closed. */
  private dead = false;
  private closed = false;
  /** Given the thread's earlier conversation, the session continues it (and reports its native id). */
  readonly resumed: boolean;
  private readonly nativeThreadId: string;

  constructor(
    private readonly host: SimProviderHost,
    private readonly ledger: SimProviderLedger,
    private readonly owner: TimerOwner,
    input: OpenSessionInput,
    private readonly capabilities: ProviderCapabilities,
    environmentId: string,
  ) {
    this.providerSessionId = input.providerSessionId;
    this.threadId = input.threadId;
    this.onEvent = input.onEvent;
    this.resumed = input.resume != null;
    this.nativeThreadId = input.resume?.nativeThreadId ?? `sim-thread:${input.providerSessionId}`;
    this.caller = { kind: "agent", environmentId, threadId: input.threadId, providerInstanceId: input.instance.id, providerSessionId: input.providerSessionId };
  }

  isLive(): boolean {
    return !this.dead && !this.closed;
  }

  hasActiveTurn(): boolean {
    return this.turn !== null && !this.turn.ended;
  }

  async startTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    await this.enter("startTurn");
    if (this.turn !== null && !this.turn.ended) throw new ProviderError(ProviderErrorCode.turnNotActive, `a turn is already running (run ${this.turn.runId})`);
    const turn: SimTurn = { runId: input.runId, nativeTurnId: `sim-turn:${++this.counter}`, ended: false, interruptRequested: false, waiting: new Map() };
    this.turn = turn;
    this.ledger.turnStarted(turn.runId, this);
    this.host.received({ threadId: this.threadId, runId: turn.runId, providerSessionId: this.providerSessionId, kind: "start", text: input.input, at: this.host.scheduler.now });
    void this.drive(turn, input.input);
  }

  async steerTurn(input: { readonly runId: string; readonly input: string }): Promise<void> {
    await this.enter("steerTurn");
    if (!this.capabilities.steering) throw new ProviderError(ProviderErrorCode.unsupported, "this simulated provider cannot steer");
    const turn = this.activeTurn(input.runId);
    this.host.received({ threadId: this.threadId, runId: turn.runId, providerSessionId: this.providerSessionId, kind: "steer", text: input.input, at: this.host.scheduler.now });
    this.emitItem(turn, { kind: "assistant_message", text: `Steered (${input.input.length} chars)` });
  }

  async interruptTurn(input: { readonly runId: string }): Promise<void> {
    await this.enter("interruptTurn");
    if (!this.capabilities.interrupt) throw new ProviderError(ProviderErrorCode.unsupported, "this simulated provider cannot interrupt");
    const turn = this.activeTurn(input.runId);
    if (turn.interruptRequested) return;
    turn.interruptRequested = true;
    for (const resolve of turn.waiting.values()) resolve(false);
    turn.waiting.clear();
    this.host.scheduler.after(this.owner, this.host.latency(), () => this.end(turn, "interrupted", null));
  }

  async respondToRequest(input: { readonly requestId: string; readonly response: unknown }): Promise<void> {
    await this.enter("respondToRequest");
    const resolve = this.turn?.waiting.get(input.requestId);
    if (resolve === undefined || this.turn === null) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${input.requestId}`);
    this.turn.waiting.delete(input.requestId);
    this.host.scheduler.after(this.owner, this.host.latency(), () => resolve(true));
  }

  async stop(): Promise<void> {
    this.host.activity();
    const delay = this.host.callDelay("stop");
    if (delay > 0) await this.host.scheduler.sleep(this.owner, delay);
    const fault = this.closed ? null : this.host.callFault("stop");
    // The adapter contract: a running turn ends "interrupted", as the last event, before stop resolves.
    const turn = this.turn;
    if (this.isLive() && turn !== null && !turn.ended) {
      turn.ended = true;
      this.onEvent({ type: "turn.completed", runId: turn.runId, status: "interrupted", error: null });
    }
    this.close();
    // A failing stop still leaves the process gone: the manager logs it and moves on.
    if (fault !== null) throw fault;
  }

  /** The process dies with its node: nothing more is heard from it. */
  kill(): void {
    this.dead = true;
    this.close();
  }

  /** The process dies on its own mid-turn: like a real adapter, report the turn failed, then refuse everything. */
  die(): void {
    if (!this.isLive()) return;
    const turn = this.turn;
    if (turn !== null && !turn.ended) this.end(turn, "failed", "the provider process exited unexpectedly");
    this.dead = true;
    if (turn !== null) this.ledger.turnEnded(turn.runId, this);
    this.ledger.live.delete(this);
  }

  private close(): void {
    this.closed = true;
    const turn = this.turn;
    if (turn !== null) {
      turn.ended = true;
      for (const resolve of turn.waiting.values()) resolve(false);
      turn.waiting.clear();
      this.ledger.turnEnded(turn.runId, this);
    }
    this.ledger.live.delete(this);
  }

  /** Every call: activity, a possible stall, then session_closed or a seeded failure. */
  private async enter(call: DriverCall): Promise<void> {
    this.host.activity();
    this.host.note(`provider ${this.providerSessionId} ${call}`);
    const delay = this.host.callDelay(call);
    if (delay > 0) await this.host.scheduler.sleep(this.owner, delay);
    if (!this.isLive()) throw new ProviderError(ProviderErrorCode.sessionClosed, "the simulated provider process is gone");
    const fault = this.host.callFault(call);
    if (fault !== null) throw fault;
  }

  private activeTurn(runId: string): SimTurn {
    const turn = this.turn;
    if (turn === null || turn.ended || turn.runId !== runId) throw new ProviderError(ProviderErrorCode.turnNotActive, `run ${runId} has no active turn here`);
    return turn;
  }

  private async drive(turn: SimTurn, input: string): Promise<void> {
    await this.host.scheduler.sleep(this.owner, this.host.latency());
    if (turn.ended || turn.interruptRequested) return;
    this.emit({ type: "turn.started", runId: turn.runId, nativeThreadId: this.nativeThreadId, nativeTurnId: turn.nativeTurnId }, true);
    const agent: AgentContext = { caller: this.caller, threadId: this.threadId, runId: turn.runId };
    let tokens = input.length;
    for (const step of this.host.planTurn(agent, input)) {
      await this.host.scheduler.sleep(this.owner, step.delayMs);
      if (turn.ended || turn.interruptRequested) return;
      switch (step.kind) {
        case "say":
          tokens += 40;
          this.emitItem(turn, { kind: "assistant_message", text: `sim says ${this.counter}.${tokens}` });
          break;
        case "usage":
          this.emit(usageOf(turn.runId, tokens), false);
          break;
        case "ask":
        case "approve": {
          const requestId = `sim-request:${this.providerSessionId}:${++this.counter}`;
          const answered = new Promise<boolean>((resolve) => turn.waiting.set(requestId, resolve));
          this.emitItem(
            turn,
            step.kind === "ask"
              ? { kind: "user_input_request", requestId, questions: [{ id: "q1", question: `Which way, ${requestId}?` }] }
              : { kind: "approval_request", requestId, requestKind: "command", title: "Run a command", detail: "sim command" },
          );
          if (!(await answered) || turn.ended || turn.interruptRequested) return;
          this.emitItem(turn, { kind: "assistant_message", text: `sim got an answer to ${requestId}` });
          break;
        }
        case "agent": {
          const result = await this.host.runAgentOp(step.op, agent);
          if (turn.ended || turn.interruptRequested) return;
          this.emitItem(turn, { kind: "dynamic_tool", toolName: step.op, arguments: {}, result, status: "completed" });
          break;
        }
        case "end":
          switch (step.how) {
            case "completed":
              this.emit(usageOf(turn.runId, tokens), false);
              this.end(turn, "completed", null);
              return;
            case "failed":
              this.end(turn, "failed", "the simulated provider reported an error");
              return;
            case "limited": {
              // A usage limit that resets one to five minutes from now, then the turn failing on it.
              const resetAt = new Date(this.host.scheduler.now + this.host.rng.int(60_000, 300_000)).toISOString();
              this.emit({ type: "limit", runId: turn.runId, kind: "usage_limit", retryAfterMs: null, resetAt, providerRetrying: false, message: "simulated usage limit" }, true);
              this.end(turn, "failed", "the simulated provider's usage limit was reached");
              return;
            }
            case "hang":
              return;
            case "die":
              this.die();
              return;
          }
      }
    }
  }

  private end(turn: SimTurn, status: "completed" | "failed" | "interrupted", error: string | null): void {
    if (turn.ended || !this.isLive()) return;
    turn.ended = true;
    this.ledger.turnEnded(turn.runId, this);
    this.emit({ type: "turn.completed", runId: turn.runId, status, error }, true);
    if (this.host.rng.chance(this.host.reorderChance())) {
      // A straggler: an item of the turn that arrives after its end.
      this.emit({ type: "item.completed", runId: turn.runId, itemId: `sim-item:${++this.counter}`, item: { kind: "assistant_message", text: "late" } }, true);
    }
  }

  private emitItem(turn: SimTurn, item: ProviderItem): void {
    this.emit({ type: "item.completed", runId: turn.runId, itemId: `sim-item:${++this.counter}`, item }, item.kind === "user_input_request" || item.kind === "approval_request");
  }

  /** Deliver after a latency, after everything sent before it unless the reorder fault lets a plain item overtake. */
  private emit(event: NormalizedProviderEvent, ordered: boolean): void {
    const now = this.host.scheduler.now;
    const earliest = now + this.host.latency();
    const overtake = !ordered && this.host.rng.chance(this.host.reorderChance());
    const at = overtake ? earliest : Math.max(earliest, this.lastEmitAt);
    if (!overtake) this.lastEmitAt = at;
    this.host.scheduler.at(this.owner, at, () => {
      if (this.closed) return;
      this.host.activity();
      this.onEvent(event);
    });
  }
}
