import type { Command } from "../../contracts/commands.js";
import { toDomainEvent } from "../../contracts/events.js";
import type { StoredEvent } from "../../contracts/envelopes.js";
import type { Decision } from "../../core/decision.js";
import { evolve, initialState, type OrchestrationState } from "../../core/state.js";
import type { EventStore } from "../../store/eventStore.js";
import { loadSandbox } from "../../app/workflows/sandbox.js";
import { ALL_FAULTS, FAULTS, type FaultKind, FaultKind as Fault } from "./faults.js";
import { INVARIANTS, INVARIANT_NAMES, type InvariantCheck, type InvariantName, type InvariantSpec, type InvariantView } from "./invariants.js";
import { SIM_LIMITS } from "./node.js";
import type { PlantedBug } from "./plantedBugs.js";
import { USER_OPERATIONS, USER_OPERATION_NAMES } from "./userOperations.js";
import { SimWorld, type StoreKind, type Violation, type WorldStats } from "./world.js";

export interface SimOptions {
  readonly seed: number;
  /** Default: every fault. */
  readonly faults?: readonly FaultKind[];
  /** Default: SQLite for every fourth seed, memory for the others. */
  readonly store?: StoreKind;
  readonly bugs?: readonly PlantedBug[];
  /** Nodes on the log (the second runs a delegation reactor of its own). Default: 2 for every third seed, 1 for the others. */
  readonly nodes?: 1 | 2;
  /** Steps of the active phase (each: maybe an operation or a fault, then some virtual time). Default 60. */
  readonly steps?: number;
  /** Keep a line per notable happening (SimResult.trace). */
  readonly trace?: boolean;
  /** Checks to use instead of (or where the table has none, besides) the table's: how the budget extension point is filled. */
  readonly invariantChecks?: Partial<Record<InvariantName, InvariantCheck>>;
  /** Called with every command a node decides and its decision, before the commit: what a test checks the decider's output with. */
  readonly onDecision?: (command: Command, decision: Decision) => void;
}

export interface SimStats extends WorldStats {
  readonly steps: number;
  readonly events: number;
  readonly threads: number;
  readonly tasks: number;
  readonly simulatedMs: number;
}

export interface SimResult {
  readonly seed: number;
  readonly store: StoreKind;
  readonly faults: readonly FaultKind[];
  readonly bugs: readonly PlantedBug[];
  readonly nodes: 1 | 2;
  readonly violations: readonly Violation[];
  readonly stats: SimStats;
  /** Every committed event, in order: two runs of one seed must produce the same log. */
  readonly log: readonly StoredEvent[];
  /** Invariants in the table without a check yet (extension points). */
  readonly pendingInvariants: readonly string[];
  /** The shortest command that replays this run. */
  readonly reproduce: string;
  readonly trace: readonly string[];
}

/** How long nothing may happen before the system counts as quiet: longer than any wait, lease, retry, stall or provider latency, plus the idle reaper's cycle. */
export const QUIET_HORIZON_MS = 400_000;
/** A run that is still busy this long after its users stopped never quiesces: that is a violation. */
const MAX_QUIET_MS = 12 * 60 * 60_000;

export function defaultStore(seed: number): StoreKind {
  return seed % 4 === 0 ? "sqlite" : "memory";
}

export function defaultNodes(seed: number): 1 | 2 {
  return seed % 3 === 0 ? 2 : 1;
}

export function reproduceCommand(seed: number, faults: readonly FaultKind[], store: StoreKind, bugs: readonly PlantedBug[], nodes: 1 | 2 = defaultNodes(seed)): string {
  const faultText = faults.length === ALL_FAULTS.length ? "all" : faults.length === 0 ? "none" : faults.join(",");
  return `npm run sim -- --seed ${seed} --faults ${faultText} --store ${store} --nodes ${nodes}${bugs.length > 0 ? ` --bugs ${bugs.join(",")}` : ""}`;
}

/** Run one seed: an active phase of seeded operations and faults, then a drain until quiet, checking invariants throughout. */
export async function runSeed(options: SimOptions): Promise<SimResult> {
  // Workflow scripts' interpreter is read from disk on its first use: loaded before the seed starts, no step of it waits on I/O.
  await loadSandbox();
  const faults = options.faults ?? ALL_FAULTS;
  const store = options.store ?? defaultStore(options.seed);
  const bugs = options.bugs ?? [];
  const nodes = options.nodes ?? defaultNodes(options.seed);
  const world = new SimWorld({ seed: options.seed, faults: new Set(faults), store, bugs, nodes, trace: options.trace ?? false, onDecision: options.onDecision });
  const steps = options.steps ?? 60;
  const checks = (when: "always" | "quiet", extra: Pick<InvariantView, "stored" | "replayed"> = { stored: null, replayed: null }) => checkInvariants(world, options, when, extra);
  let step = 0;
  const stopCatching = catchEscapedErrors(world);
  try {
    await world.boot();
    for (; step < steps && world.violations.length === 0; step++) {
      if (world.node === null) await world.boot();
      takeStep(world, faults);
      await world.settle();
      await world.advance(world.scheduler.now + world.rng.int(0, 4_000));
      checks("always");
    }
    if (world.violations.length === 0) await quiesce(world, checks);
    if (world.violations.length === 0 && world.node !== null) {
      const stored = await readEverything(world.node.store);
      checks("always");
      checks("quiet", { stored, replayed: fold(stored) });
    }
  } catch (error) {
    world.violation("simulator-runs", `the simulation itself failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  const state = world.state();
  const crashes = world.stats.crashes;
  await world.dispose();
  await stopCatching();
  return {
    seed: options.seed,
    store,
    faults,
    bugs,
    violations: world.violations,
    stats: { ...world.stats, crashes, steps: step, events: world.log.length, threads: state?.threads.size ?? 0, tasks: state?.tasks.size ?? 0, simulatedMs: world.elapsed },
    log: world.log,
    pendingInvariants: INVARIANT_NAMES.filter((name) => INVARIANTS[name].check === null && options.invariantChecks?.[name] === undefined),
    nodes,
    reproduce: reproduceCommand(options.seed, faults, store, bugs, nodes),
    trace: world.trace,
  };
}

/**
 * While a seed runs, an error that escapes every handler of Loom's (an
 * uncaught exception in a callback, a rejection nobody handles) is a
 * violation of this seed, never the end of the process: the seeds after it
 * still run, and this one is reported with its reproduce line. Node would
 * end the process on either. Resolves, once the seed's last callbacks have
 * run, to stop catching.
 */
function catchEscapedErrors(world: SimWorld): () => Promise<void> {
  const escaped = (kind: string) => (error: unknown) =>
    world.violation("errors-never-escape", `${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const onException = escaped("an uncaught exception");
  const onRejection = escaped("an unhandled rejection");
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return async () => {
    // Rejections are reported after the microtasks of a turn: let the disposed seed's last ones run first.
    await world.settle();
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}

/** One step: an operation of a user, a fault, or just time passing. */
function takeStep(world: SimWorld, faults: readonly FaultKind[]): void {
  const operations = USER_OPERATION_NAMES.map((name) => ({ name, weight: USER_OPERATIONS[name].weight(world) }));
  const injectable = faults.filter((fault) => FAULTS[fault].weight > 0);
  const choice = world.rng.weighted([
    { weight: 70, kind: "operation" as const },
    { weight: injectable.length > 0 ? 8 : 0, kind: "fault" as const },
    { weight: 22, kind: "wait" as const },
  ])!;
  if (choice.kind === "operation") {
    const picked = world.rng.weighted(operations);
    if (picked === null) return;
    world.note(`user ${picked.name}`);
    void USER_OPERATIONS[picked.name].run(world).then((outcome) => world.note(`user ${picked.name}: ${outcome}`));
  } else if (choice.kind === "fault") {
    const fault = world.rng.weighted(injectable.map((kind) => ({ kind, weight: FAULTS[kind].weight })))!.kind;
    injectFault(world, fault);
  }
}

/** The discrete faults (FAULTS entries with a weight). */
function injectFault(world: SimWorld, fault: FaultKind): void {
  world.note(`fault ${fault}`);
  switch (fault) {
    case Fault.crash:
      world.armCrash();
      return;
    case Fault.providerDeath:
      world.killProviderProcess();
      return;
    case Fault.leaseExpiry:
      world.armLeaseLapse();
      return;
    case Fault.slowEvents:
    case Fault.reorderEvents:
    case Fault.effectFailure:
    case Fault.hang:
      return; // ambient: they shape provider behaviour throughout the active phase
  }
}

/** Users stop and faults end; run virtual time until nothing has happened for QUIET_HORIZON_MS and no effect is open. */
async function quiesce(world: SimWorld, checks: (when: "always") => void): Promise<void> {
  world.phase = "quiet";
  const deadline = world.scheduler.now + MAX_QUIET_MS;
  let checkedAt = -1;
  for (;;) {
    if (world.violations.length > 0) return;
    if (world.node === null) await world.boot();
    if (world.node === null) return;
    if (world.lastEventAt !== checkedAt) {
      checkedAt = world.lastEventAt;
      checks("always");
    }
    if (world.scheduler.now - world.lastEventAt >= QUIET_HORIZON_MS && (await openEffects(world.node.store)) === 0) return;
    if (world.scheduler.now > deadline) {
      world.violation("system-quiesces", `still busy ${MAX_QUIET_MS / 3_600_000} h after the users stopped`);
      return;
    }
    const next = world.scheduler.nextAt();
    if (next === null) return;
    await world.advance(next);
  }
}

async function openEffects(store: EventStore): Promise<number> {
  const [pending, leased] = await Promise.all([store.listOutbox("pending"), store.listOutbox("leased")]);
  return pending.length + leased.length;
}

async function readEverything(store: EventStore): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for (;;) {
    const page = await store.readAll(events.length, 10_000);
    events.push(...page);
    if (page.length < 10_000) return events;
  }
}

/** A fresh fold of the log with core's evolve: what the read model must equal. */
function fold(events: readonly StoredEvent[]): OrchestrationState {
  const state = initialState();
  for (const event of events) evolve(state, toDomainEvent(event));
  state.lastSequence = events[events.length - 1]?.sequence ?? 0;
  return state;
}

function checkInvariants(world: SimWorld, options: SimOptions, when: "always" | "quiet", extra: Pick<InvariantView, "stored" | "replayed">): void {
  const state = world.state();
  if (state === null) return;
  const view: InvariantView = { state, log: world.log, received: world.received, delegations: world.delegations, deciderFailures: world.deciderFailures, limits: SIM_LIMITS, ...extra };
  for (const name of INVARIANT_NAMES) {
    const spec: InvariantSpec = INVARIANTS[name];
    if (spec.when !== when) continue;
    const check = options.invariantChecks?.[name] ?? spec.check;
    if (check === null) continue;
    for (const message of check(view)) world.violation(name, message);
  }
}
