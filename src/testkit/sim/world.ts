import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AppError, isShutdownError } from "../../app/errors.js";
import type { AppContext } from "../../app/context.js";
import { NEXT_TURN } from "../../app/workflows/sandbox.js";
import type { WorkflowRunner } from "../../app/workflows/runner.js";
import { CommandInputError } from "../../app/commands.js";
import type { Command } from "../../contracts/commands.js";
import type { StoredEvent } from "../../contracts/envelopes.js";
import type { Decision } from "../../core/decision.js";
import type { OrchestrationState } from "../../core/state.js";
import type { ProviderError } from "../../providers/adapter.js";
import type { CommitEntry, CommitResult, EventStore } from "../../store/eventStore.js";
import { MemoryEventStore } from "../../store/memory/memoryEventStore.js";
import { SqliteEventStore } from "../../store/sqlite/sqliteEventStore.js";
import { AGENT_OPERATIONS, isAgentOperation, planTurn } from "./agentOperations.js";
import { FaultKind, simulatedCallFailure } from "./faults.js";
import type { CrashPoint, StoreHooks } from "./fencedStore.js";
import type { DelegationRecord } from "./invariants.js";
import { type NodeWorld, SIM_INSTANCES, SIM_TIMING, SimNode } from "./node.js";
import type { OperationWorld, Outcome } from "./operations.js";
import { type BugWiring, type PlantedBug, bugWiring } from "./plantedBugs.js";
import { SimRandom } from "./random.js";
import { SimScheduler } from "./scheduler.js";
import { type AgentContext, type DriverCall, type ReceivedInput, type SimProviderHost, SimProviderLedger, type TurnStep } from "./simDriver.js";

export type StoreKind = "memory" | "sqlite";

export interface Violation {
  readonly invariant: string;
  readonly message: string;
  /** Virtual milliseconds since the start of the run. */
  readonly at: number;
}

export interface WorldConfig {
  readonly seed: number;
  readonly faults: ReadonlySet<FaultKind>;
  readonly store: StoreKind;
  readonly bugs: readonly PlantedBug[];
  /** 2: a second node on the log runs its own delegation reactor (SimNode.boot). */
  readonly nodes: 1 | 2;
  readonly trace: boolean;
  /** Sees every command a node decides and its decision (SimOptions.onDecision). */
  readonly onDecision?: (command: Command, decision: Decision) => void;
}

export interface WorldStats {
  operations: number;
  typedFailures: number;
  crashes: number;
  providerDeaths: number;
  leaseLapses: number;
  lostCalls: number;
  /** Runs boot reconciliation interrupted, and lost steers it re-sent, over all restarts. */
  interruptedOnBoot: number;
  resentSteersOnBoot: number;
  /** Turn item reads of a killed node's code that met its closed store (SQLite). */
  closedStoreReads: number;
}

/**
 * The simulated universe of one seed: the virtual clock, the one random
 * source, the durable store (memory, or SQLite in a temp file), the node
 * that is up (or none, between a crash and its restart), the simulated
 * providers, and what was observed for the invariants.
 */
export class SimWorld implements OperationWorld {
  readonly rng: SimRandom;
  readonly scheduler = new SimScheduler();
  readonly ledger: SimProviderLedger;
  readonly instances = SIM_INSTANCES.map((instance) => instance.id);
  readonly bugs: BugWiring;
  phase: "active" | "quiet" = "active";
  node: SimNode | null = null;
  /** Increments on every store call, provider call or event, timer registration and app call: the runner waits for it to stop moving. */
  activityCount = 0;
  readonly log: StoredEvent[] = [];
  lastEventAt: number;
  readonly received: ReceivedInput[] = [];
  readonly delegations: DelegationRecord[] = [];
  readonly deciderFailures: string[] = [];
  readonly violations: Violation[] = [];
  readonly stats: WorldStats = { operations: 0, typedFailures: 0, crashes: 0, providerDeaths: 0, leaseLapses: 0, lostCalls: 0, interruptedOnBoot: 0, resentSteersOnBoot: 0, closedStoreReads: 0 };
  readonly trace: string[] = [];
  private readonly started: number;
  private incarnation = 0;
  private counter = 0;
  private readonly requestIds = new Map<string, string[]>();
  private durable: EventStore | null = null;
  private readonly sqliteDir: string | null;
  /** Store calls left before an armed crash fires, and where. */
  private crashArmed: { left: number; point: CrashPoint } | null = null;
  private renewalsLostUntil = 0;
  private killCurrent: (() => void) | null = null;
  private onKilled: () => void = () => undefined;
  private stallNextCall = 0;

  constructor(readonly config: WorldConfig) {
    this.rng = new SimRandom(config.seed);
    this.host = this.makeHost();
    this.ledger = new SimProviderLedger(this.host);
    this.bugs = observedDecisions(bugWiring(config.bugs), config.onDecision);
    this.started = this.scheduler.now;
    this.lastEventAt = this.scheduler.now;
    // A real SQLite file, on tmpfs where there is one: the simulation tests the store's logic, not the disk.
    this.sqliteDir = config.store === "sqlite" ? mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "loom-sim-")) : null;
  }

  get elapsed(): number {
    return this.scheduler.now - this.started;
  }

  has(fault: FaultKind): boolean {
    return this.phase === "active" && this.config.faults.has(fault);
  }

  note(line: string): void {
    if (this.config.trace) this.trace.push(`${(this.elapsed / 1000).toFixed(3)}s ${line}`);
  }

  violation(invariant: string, message: string): void {
    this.violations.push({ invariant, message, at: this.elapsed });
    this.note(`VIOLATION ${invariant}: ${message}`);
  }

  // --- the node ---------------------------------------------------------

  /** Boot a node from the durable store; again if a crash fires while it boots. */
  async boot(): Promise<void> {
    while (this.node === null && this.violations.length === 0) {
      const incarnation = ++this.incarnation;
      const killed = new Promise<null>((resolve) => (this.onKilled = () => resolve(null)));
      const booting = SimNode.boot(this.nodeWorld, incarnation, this.openDurable(), (kill) => (this.killCurrent = kill));
      try {
        this.node = await Promise.race([booting, killed]);
      } catch (error) {
        this.violation("node-boots", `booting node ${incarnation} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        return;
      }
      if (this.node !== null) this.note(`node ${incarnation} up`);
    }
  }

  private openDurable(): EventStore {
    if (this.config.store === "memory") {
      this.durable ??= new MemoryEventStore({ clock: this.scheduler.clock, newId: () => this.rng.uuid(), onListenerError: (error) => this.violation("listeners-never-throw", String(error)) });
      return this.durable;
    }
    // SQLite: each node opens the file anew, as a restarted process would.
    this.durable = SqliteEventStore.open(join(this.sqliteDir!, "loom.sqlite"), { clock: this.scheduler.clock, newId: () => this.rng.uuid(), onListenerError: (error) => this.violation("listeners-never-throw", String(error)) });
    return this.durable;
  }

  /** kill -9 the node that is up (or booting), synchronously. */
  crash(): void {
    const kill = this.killCurrent;
    if (kill === null) return;
    this.killCurrent = null;
    this.node = null;
    this.crashArmed = null;
    this.stats.crashes += 1;
    kill();
    this.onKilled();
    if (this.config.store === "sqlite") void this.durable?.close();
    this.note(`node ${this.incarnation} killed`);
  }

  armCrash(): void {
    this.crashArmed = { left: this.rng.int(0, 40), point: this.rng.chance(0.5) ? "before" : "after" };
  }

  armLeaseLapse(): void {
    this.stats.leaseLapses += 1;
    this.renewalsLostUntil = this.scheduler.now + SIM_TIMING.leaseMs * 3;
    this.stallNextCall = Math.round(SIM_TIMING.leaseMs * (1.2 + this.rng.int(0, 100) / 100));
  }

  killProviderProcess(): void {
    const live = [...this.ledger.live].filter((session) => session.hasActiveTurn());
    const pool = live.length > 0 ? live : [...this.ledger.live];
    if (pool.length === 0) return;
    this.stats.providerDeaths += 1;
    const session = this.rng.pick(pool);
    this.note(`provider process of ${session.providerSessionId} dies`);
    session.die();
  }

  async dispose(): Promise<void> {
    this.crash();
    await this.durable?.close();
    if (this.sqliteDir !== null) rmSync(this.sqliteDir, { recursive: true, force: true });
  }

  // --- running ----------------------------------------------------------

  /** Let the event loop run until nothing moves: every microtask and immediate of the current instant. */
  async settle(): Promise<void> {
    let still = 0;
    while (still < 2) {
      const before = this.activityCount;
      await new Promise<void>((resolve) => setImmediate(resolve));
      still = this.activityCount === before ? still + 1 : 0;
    }
  }

  /** Run every timer due up to `until`, settling after each, then move the clock there. */
  async advance(until: number): Promise<void> {
    while (this.scheduler.runNext(until)) {
      this.activityCount += 1;
      await this.settle();
      if (this.node === null && this.violations.length === 0) await this.boot();
    }
    this.scheduler.advanceTo(until);
  }

  state(): OrchestrationState | null {
    return this.node?.orchestrator.state ?? null;
  }

  now(): string {
    return new Date(this.scheduler.now).toISOString();
  }

  next(): number {
    return ++this.counter;
  }

  clientRequestIds(threadId: string): string[] {
    let ids = this.requestIds.get(threadId);
    if (ids === undefined) this.requestIds.set(threadId, (ids = []));
    return ids;
  }

  recordDelegation(parentThreadId: string, clientRequestId: string | undefined, taskId: string): void {
    this.delegations.push({ parentThreadId, clientRequestId, taskId });
  }

  async invoke<T>(operation: string, call: (app: AppContext, workflows: WorkflowRunner) => Promise<T>): Promise<Outcome<T>> {
    const node = this.node;
    if (node === null) {
      this.stats.lostCalls += 1;
      return { ok: false, code: "node_down" };
    }
    this.stats.operations += 1;
    this.activityCount += 1;
    try {
      const value = await call(node.app, node.workflows);
      this.activityCount += 1;
      return { ok: true, value };
    } catch (error) {
      this.activityCount += 1;
      if (error instanceof AppError) {
        this.stats.typedFailures += 1;
        this.note(`${operation} failed ${error.code}: ${error.message}`);
        return { ok: false, code: error.code };
      }
      if (error instanceof CommandInputError) return { ok: false, code: "invalid_command" };
      // The node crashed or stopped under the call: the transports answer it as shutting down (toFailure).
      if (isShutdownError(error)) {
        this.stats.typedFailures += 1;
        this.note(`${operation} cut off: the store closed under it`);
        return { ok: false, code: "node_down" };
      }
      this.violation("typed-failures", `${operation} threw an untyped error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      return { ok: false, code: "untyped" };
    }
  }

  private traceCommit(entry: CommitEntry, result: CommitResult): void {
    if (result.receipt.status !== "accepted") return;
    const facts: string[] = [];
    for (const event of result.events) {
      const data = event.data as { run?: { id: string; status: string; endReason: string | null }; item?: { type: string; messageId?: string | null; runId: string | null }; task?: { taskId: string; status: string; completionDelivery: string } | null };
      if ((event.type === "run.created" || event.type === "run.updated") && data.run !== undefined) facts.push(`run ${data.run.id} ${data.run.status}${data.run.endReason === null ? "" : ` (${data.run.endReason})`}`);
      if (event.type === "turn-item.updated" && data.item?.type === "user_message") facts.push(`message ${data.item.messageId ?? "?"} on ${data.item.runId ?? "?"}`);
      if (event.type === "subagent.updated" && data.task != null) facts.push(`task ${data.task.taskId} ${data.task.status}/${data.task.completionDelivery}`);
    }
    for (const effect of entry.outbox) facts.push(`effect ${effect.kind}`);
    this.note(`${entry.receipt.commandType} [${entry.receipt.commandId}] ${facts.join("; ")}`);
  }

  // --- what the node and the providers see of the world -------------------

  readonly storeHooks: StoreHooks = {
    crashPoint: () => {
      this.activityCount += 1;
      const armed = this.crashArmed;
      if (armed === null || this.phase !== "active") return null;
      if (armed.left > 0) {
        armed.left -= 1;
        return null;
      }
      return armed.point;
    },
    crash: () => this.crash(),
    committed: (entries: readonly CommitEntry[], results: readonly CommitResult[]) => {
      results.forEach((result, index) => {
        const receipt = result.receipt;
        if (!result.duplicate && receipt.status === "rejected" && receipt.rejection.code === "orchestration_error") this.deciderFailures.push(`${receipt.commandType} (${receipt.commandId})`);
        if (!result.duplicate && receipt.status === "rejected" && this.config.trace) this.note(`rejected ${entries[index]!.receipt.commandType}: ${receipt.rejection.code} ${receipt.rejection.message}`);
      });
      results.forEach((result, index) => {
        for (const event of result.events) this.logEvent(event);
        if (result.events.length > 0) this.lastEventAt = this.scheduler.now;
        if (this.config.trace && !result.duplicate) this.traceCommit(entries[index]!, result);
      });
    },
    renewalsLost: () => this.scheduler.now < this.renewalsLostUntil,
    claimed: (rows) => {
      if (this.config.trace) for (const row of rows) this.note(`claimed ${row.kind} ${row.id} (attempt ${row.attempts}) ${JSON.stringify(row.payload).slice(0, 160)}`);
    },
    closedStoreRead: () => {
      this.stats.closedStoreReads += 1;
      this.note("a killed node read its closed store: store_closed");
    },
  };

  readonly host: SimProviderHost;

  private makeHost(): SimProviderHost {
    return {
      rng: this.rng,
      scheduler: this.scheduler,
      activity: () => void (this.activityCount += 1),
      latency: () => {
        if (this.has(FaultKind.slowEvents) && this.rng.chance(0.08)) return this.rng.int(10_000, 150_000);
        return this.rng.int(1, 1_500);
      },
      callFault: (call: DriverCall): ProviderError | null => (this.has(FaultKind.effectFailure) && this.rng.chance(0.07) ? simulatedCallFailure(call) : null),
      callDelay: () => {
        const stall = this.stallNextCall;
        this.stallNextCall = 0;
        return stall;
      },
      reorderChance: () => (this.has(FaultKind.reorderEvents) ? 0.15 : 0),
      planTurn: (): readonly TurnStep[] => planTurn(this, { hang: this.has(FaultKind.hang), die: this.has(FaultKind.providerDeath), limited: this.has(FaultKind.usageLimit) }),
      runAgentOp: async (op: string, agent: AgentContext) => {
        if (!isAgentOperation(op)) throw new Error(`unknown agent operation ${op}`);
        this.note(`agent ${agent.threadId} ${op}`);
        return AGENT_OPERATIONS[op].run(this, agent);
      },
      received: (input: ReceivedInput) => void this.received.push(input),
      violation: (invariant: string, message: string) => this.violation(invariant, message),
      note: (line: string) => this.note(line),
    };
  }

  /**
   * Keep the log in commit order. With a peer node, a commit the peer made
   * while reacting to one of the node's can report back first (its store
   * call began and ended inside the node's), so it is placed by sequence.
   */
  private logEvent(event: StoredEvent): void {
    let at = this.log.length;
    while (at > 0 && this.log[at - 1]!.sequence > event.sequence) at -= 1;
    this.log.splice(at, 0, event);
  }

  private get nodeWorld(): NodeWorld {
    return {
      scheduler: this.scheduler,
      random: this.rng,
      host: this.host,
      ledger: this.ledger,
      storeHooks: this.storeHooks,
      bugs: this.bugs,
      nodes: this.config.nodes,
      log: (line: string) => this.note(line),
      // A workflow script's sandbox steps on turns of the event loop: each is activity, so settle waits for the step.
      sandboxTurn: () => {
        this.activityCount += 1;
        return NEXT_TURN();
      },
      reconciled: (report) => {
        this.stats.interruptedOnBoot += report.interruptedRuns;
        this.stats.resentSteersOnBoot += report.resentSteers;
      },
    };
  }
}

/** The wiring with its decider reporting each decision to `observe`, unchanged when there is no observer. */
function observedDecisions(wiring: BugWiring, observe: WorldConfig["onDecision"]): BugWiring {
  if (observe === undefined) return wiring;
  return {
    ...wiring,
    decide: (state, command, ctx) => {
      const decision = wiring.decide(state, command, ctx);
      observe(command, decision);
      return decision;
    },
  };
}
