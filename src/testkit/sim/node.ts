import type { AppContext } from "../../app/context.js";
import { WorkflowRunner } from "../../app/workflows/runner.js";
import type { SandboxTurn } from "../../app/workflows/sandbox.js";
import type { ThreadSearchIndex } from "../../app/search/threadSearch.js";
import { TitleRegenerations } from "../../app/threads/titleRegeneration.js";
import { DEFAULT_TITLES, type ProviderInstanceConfig } from "../../config/config.js";
import type { DelegationLimits, ProviderFacts } from "../../core/decision.js";
import type { Random } from "../../engine/clock.js";
import { BudgetReactor } from "../../engine/budgetReactor.js";
import { DelegationReactor } from "../../engine/delegationReactor.js";
import { Orchestrator } from "../../engine/orchestrator.js";
import { OutboxWorker } from "../../engine/outboxWorker.js";
import { type ReconcileReport, reconcileOnBoot } from "../../engine/reconcile.js";
import { ProviderRegistry } from "../../providers/registry.js";
import { SecretVault } from "../../providers/secretVault.js";
import { ProviderSessionManager, type SessionCredentials } from "../../providers/sessionManager.js";
import type { EventStore } from "../../store/eventStore.js";
import { FencedStore, type StoreHooks } from "./fencedStore.js";
import type { BugWiring } from "./plantedBugs.js";
import type { SimScheduler, TimerOwner } from "./scheduler.js";
import { SIM_DRIVER, SimDriver, type SimProviderHost, type SimProviderLedger } from "./simDriver.js";
import { SIM_ENVIRONMENT } from "./userOperations.js";
import { MemoryWebhookDeliveries } from "../../store/webhookDeliveries/memoryWebhookDeliveries.js";
import { MemoryWebhookKeyStore } from "../../app/schedules/webhookKeys.js";
import { failOverLimited } from "../../app/limits/failover.js";
import { followLimitResumes, limitResumes, resumeAfterLimit } from "../../app/limits/limitResumes.js";
import { LimitResumer } from "../../scheduler/limitResumer.js";

/**
 * The simulated threads use no worktrees and take no turn checkpoints (the
 * orchestrator's turnCheckpoints stays off), so no workspace effect is ever
 * written; one that were would fail loudly.
 */
const notSimulated = (kind: string) => () => Promise.reject(new Error(`the simulator does not run ${kind} effects`));
const NO_WORKSPACE_EFFECTS = {
  "workspace.prepare": notSimulated("workspace.prepare"),
  "checkpoint.capture": notSimulated("checkpoint.capture"),
  "checkpoint.restore": notSimulated("checkpoint.restore"),
  "workspace.cleanup": notSimulated("workspace.cleanup"),
  "merge-queue.merge": notSimulated("merge-queue.merge"),
} as const;

const NO_SEARCH: ThreadSearchIndex = {
  search: () => Promise.reject(new Error("the simulator has no search index")),
  waitFor: () => Promise.resolve(true),
};

/** Timing of the simulated node: production's shape, shortened so idle reaping and lease expiry happen within a run. */
export const SIM_TIMING = {
  leaseMs: 60_000,
  pollMs: 1_000,
  idleMs: 120_000,
  maxWaitMs: 30_000,
  progressIntervalMs: 5_000,
} as const;

export const SIM_LIMITS: DelegationLimits = { maxDelegationDepth: 3, maxActiveChildrenPerThread: 4, maxSpawnsPerRootThread: 10 };

/** a steers and interrupts; b interrupts only (notices queue); c does neither (a stop releases its session). */
export const SIM_INSTANCES: readonly ProviderInstanceConfig[] = [
  { id: "sim-a", driver: SIM_DRIVER, enabled: true, displayName: null, models: null, options: { steering: true, interrupt: true } },
  { id: "sim-b", driver: SIM_DRIVER, enabled: true, displayName: null, models: null, options: { steering: false, interrupt: true } },
  { id: "sim-c", driver: SIM_DRIVER, enabled: true, displayName: null, models: null, options: { steering: false, interrupt: false } },
];

/** Agents in the simulation call the app layer directly: their credentials are only names. */
const SIM_CREDENTIALS: SessionCredentials = {
  issue: (scope) => ({ token: `sim-token:${scope.providerSessionId}`, credentialId: `sim-credential:${scope.providerSessionId}` }),
  revokeSession: () => 0,
};

export interface NodeWorld {
  readonly scheduler: SimScheduler;
  readonly random: Random;
  readonly host: SimProviderHost;
  readonly ledger: SimProviderLedger;
  readonly storeHooks: StoreHooks;
  readonly bugs: BugWiring;
  /** 2: a peer node on the same log runs a delegation reactor of its own. */
  readonly nodes: 1 | 2;
  readonly log: (line: string) => void;
  /** How workflow scripts' sandboxes let the event loop turn (WorkflowRunnerOptions.turn). */
  readonly sandboxTurn: SandboxTurn;
  /** What boot reconciliation did. */
  readonly reconciled: (report: ReconcileReport) => void;
}

/**
 * One incarnation of a Loom node: the real orchestrator, outbox worker,
 * session manager, delegation and budget reactors, workflow runner and app
 * context, wired as
 * startLoomServer wires them but on the simulator's clock, timers, ids and
 * provider driver, over a fenced handle on the durable store.
 */
export class SimNode {
  private constructor(
    readonly incarnation: TimerOwner,
    /** The node's fenced handle on the durable store. */
    readonly store: FencedStore,
    readonly orchestrator: Orchestrator,
    readonly app: AppContext,
    /** Runs the workflow scripts the log says are running, as startLoomServer's does. */
    readonly workflows: WorkflowRunner,
  ) {}

  /**
   * Boot from the durable store: replay, reconcile, start the worker, reactor
   * and reaper. `onKill` receives, before anything runs, the function that
   * kills this incarnation (kill -9: the store refuses it, its provider
   * processes die, its timers never fire); a node killed while booting never
   * finishes.
   */
  static async boot(world: NodeWorld, incarnation: TimerOwner, durable: EventStore, onKill: (kill: () => void) => void): Promise<SimNode> {
    const store = new FencedStore(durable, world.storeHooks);
    const clock = world.scheduler.clock;
    const timers = world.scheduler.timers(incarnation);
    const driver = new SimDriver(world.host, world.ledger, incarnation, SIM_ENVIRONMENT);
    onKill(() => {
      store.kill();
      driver.kill();
      world.scheduler.kill(incarnation);
    });
    const registry = new ProviderRegistry(SIM_INSTANCES, new Map([[SIM_DRIVER, driver]]), { now: clock });
    const providers = (id: string): ProviderFacts | null => {
      const instance = registry.instance(id);
      return instance === null ? null : { driver: SIM_DRIVER, capabilities: driver.capabilities(instance) };
    };
    // hotThreads 0: every idle thread's turn items leave memory after each commit, so every read of them goes to the store.
    // Every commit wakes the worker once it runs (set below, after boot reconciliation).
    let wakeOutbox = (): void => undefined;
    const orchestrator = await Orchestrator.open({
      store,
      clock,
      uuid: () => world.random.uuid(),
      providers,
      limits: SIM_LIMITS,
      decide: world.bugs.decide,
      hotThreads: 0,
      wakeOutbox: () => wakeOutbox(),
    });
    const sessions = new ProviderSessionManager({
      orchestrator,
      registry,
      credentials: SIM_CREDENTIALS,
      environmentId: SIM_ENVIRONMENT,
      mcpUrl: () => "sim://loom/mcp",
      workingDirectory: () => "/sim/project",
      idleMs: SIM_TIMING.idleMs,
      clock,
      timers,
      random: world.random,
      log: world.log,
    });
    const worker = new OutboxWorker({
      store,
      handlers: { ...sessions.handlers(), ...NO_WORKSPACE_EFFECTS },
      owner: `sim-node:${incarnation}`,
      clock,
      timers,
      leaseMs: SIM_TIMING.leaseMs,
      pollMs: SIM_TIMING.pollMs,
      onFailed: (row, error) => sessions.onEffectFailed(row, error),
      log: world.log,
    });
    const nodeId = `sim-node:${incarnation}`;
    const app: AppContext = {
      orchestrator,
      registry,
      environmentId: SIM_ENVIRONMENT,
      projects: [{ id: "default", root: "/sim/project", name: "project" }],
      scratchRoot: "/sim/scratch",
      maxWaitMs: SIM_TIMING.maxWaitMs,
      progressIntervalMs: SIM_TIMING.progressIntervalMs,
      clock,
      timers,
      random: world.random,
      nodeId,
      // The simulated users and agents do not search; a search would say so instead of waiting on a projection.
      search: NO_SEARCH,
      secrets: { vault: new SecretVault(), isSessionLive: (providerSessionId) => sessions.isSessionLive(providerSessionId) },
      titles: new TitleRegenerations(DEFAULT_TITLES, world.log),
      workspaces: { worktreesRoot: "/sim/worktrees", branchPrefix: "loom/", fallbackRoot: "/sim/project", setupRunDir: "/sim/run/setup" },
      // The simulated users do not schedule; the settings are there because every app context has them.
      schedules: {
        keys: new MemoryWebhookKeyStore(),
        baseUrl: () => "http://sim.invalid",
        minIntervalMs: 60_000,
        timeZone: "UTC",
        webhookMaxBodyBytes: 1024 * 1024,
        deliveries: new MemoryWebhookDeliveries(),
        webhookToleranceMs: 5 * 60_000,
      },
    };
    const reactor = new DelegationReactor(world.bugs.reactorEngine(orchestrator, nodeId), world.log);
    // A second node on the same log runs only its own delegation reactor, as every node on shared PostgreSQL does: its decisions must agree with this one's.
    const peer = world.nodes === 2 ? await Orchestrator.open({ store, clock, uuid: () => world.random.uuid(), providers, limits: SIM_LIMITS, decide: world.bugs.decide, hotThreads: 0 }) : null;
    const peerReactor = peer === null ? null : new DelegationReactor(world.bugs.reactorEngine(peer, `sim-peer:${incarnation}`), world.log);
    const budgets = new BudgetReactor(orchestrator, clock, world.log, timers);
    // At most as many agent() tasks at once as a thread may have unfinished children, as the configuration allows.
    const workflows = new WorkflowRunner(app, { log: world.log, maxConcurrentAgents: SIM_LIMITS.maxActiveChildrenPerThread, turn: world.sandboxTurn });
    world.reconciled(await reconcileOnBoot(orchestrator, store, world.random.uuid()));
    wakeOutbox = () => worker.kick();
    worker.start();
    await reactor.start();
    await peerReactor?.start();
    await budgets.start();
    sessions.startReaper();
    await workflows.start();
    // Work a usage limit stopped resumes at the reset (or moves to a failover instance), on the simulator's clock and timers.
    const limits = new LimitResumer({
      app: {
        clock,
        limitResumes: () => limitResumes(app),
        followLimitResumes: (onChange) => followLimitResumes(app, onChange),
        resumeAfterLimit: (due) => resumeAfterLimit(app, due),
        failOverLimited: (log) => failOverLimited(app, log),
      },
      timers: { set: (callback, delayMs) => timers.timeout(delayMs, callback), clear: (handle) => (handle as { cancel(): void }).cancel() },
      log: world.log,
    });
    await limits.start();
    return new SimNode(incarnation, store, orchestrator, app, workflows);
  }
}
