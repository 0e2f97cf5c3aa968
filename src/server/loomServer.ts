import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HttpError, type RouteHandler, sendError } from "../http/http.js";
import { orchestrationRoutes, sha256 } from "../api/routes.js";
import { WsTicketBook } from "../api/ownerAuth.js";
import { uiRoutes } from "../api/uiRoutes.js";
import { UiSessionBook, isUiSessionRequest } from "../api/uiSessions.js";
import { staticFiles } from "../http/staticFiles.js";
import { createWsEndpoint } from "../api/wsEndpoint.js";
import { workspaceRoutes } from "../api/workspaceRoutes.js";
import type { AppContext } from "../app/context.js";
import { followIdleSessions } from "../app/idleSessions.js";
import { DelegationReactor } from "../engine/delegationReactor.js";
import { BudgetReactor } from "../engine/budgetReactor.js";
import { TaskWaiters } from "../engine/taskWaiters.js";
import { Orchestrator } from "../engine/orchestrator.js";
import { OutboxWorker } from "../engine/outboxWorker.js";
import { reconcileOnBoot } from "../engine/reconcile.js";
import { reconcileWorkspacesOnBoot } from "../app/workspaces/boot.js";
import { WorkspaceEffects } from "../app/workspaces/effects.js";
import type { WorkspaceSettings } from "../app/workspaces/paths.js";
import { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import { nodeRoutes } from "../api/nodeRoutes.js";
import { nodeHostname, openNodeBackend } from "./nodeBackend.js";
import { NodeHeartbeats, type NodeLostError } from "./nodeHeartbeats.js";
import { nodesReport } from "./nodesReport.js";
import type { NodeRegistry } from "../store/nodes/nodeRegistry.js";
import { createMcpRoute } from "../mcp/httpEndpoint.js";
import { delegationToolkit } from "../mcp/toolkits/delegation/tools.js";
import { diagnosticsToolkit } from "../mcp/toolkits/diagnostics/tools.js";
import { threadControlToolkit } from "../mcp/toolkits/threadControl/tools.js";
import { threadToolkit } from "../mcp/toolkits/threads/tools.js";
import { backgroundToolkit } from "../mcp/toolkits/background/tools.js";
import { searchToolkit } from "../mcp/toolkits/search/tools.js";
import { secretsToolkit } from "../mcp/toolkits/secrets/tools.js";
import { secretRoutes } from "../api/secretRoutes.js";
import { scheduleRoutes } from "../api/scheduleRoutes.js";
import { schedulesToolkit } from "../mcp/toolkits/schedules/tools.js";
import { workflowsToolkit } from "../mcp/toolkits/workflows/tools.js";
import { WorkflowRunner } from "../app/workflows/runner.js";
import { isTimeZone, schedulerTimeZone } from "../app/schedules/dueTimes.js";
import { FileWebhookKeyStore } from "../app/schedules/webhookKeys.js";
import { Scheduler, type SchedulerTimers } from "../scheduler/scheduler.js";
import { PullRequestWatcher } from "../scheduler/pullRequestWatcher.js";
import { TitleRegenerations, reconcileTitleRegenerations } from "../app/threads/titleRegeneration.js";
import { SearchProjection } from "../engine/searchProjection.js";
import { SecretVault } from "../providers/secretVault.js";
import { SqliteSearchIndex } from "../store/search/sqliteSearchIndex.js";
import { ConfigError, ConfigErrorCode, DEFAULT_CONFIG_FILE, DEFAULT_LOG, type LogLevel, type LoomConfig, loadConfig } from "../config/config.js";
import { type ServerLog, openServerLog } from "./serverLog.js";
import { validateProviderInstances } from "../providers/kit/validateInstances.js";
import { ProviderRegistry } from "../providers/registry.js";
import { reportProviders } from "./providerReport.js";
import { agentHomeName, forgetAgentHomes } from "./agentHomes.js";
import { ProviderSessionManager } from "../providers/sessionManager.js";
import { WarmPools } from "../providers/warmPool.js";
import { LOOM_VERSION } from "../version.js";
import { builtInDrivers, providerFacts } from "./providerWiring.js";
import { type TraceWiring, openTraceWiring, telemetrySettings } from "./telemetryWiring.js";
import type { ProviderDriver } from "../providers/adapter.js";
import { type StateDir, ensureEnvironmentId, ensureOwnerToken, openStateDir, removeServerInfo, writeServerInfo } from "./stateDir.js";

export interface LoomServerOptions {
  readonly stateDir: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly configPath?: string;
  /** Where the default project lives when the config names none. */
  readonly cwd?: string;
  /** Mount the diagnostics toolkit (loom_echo): benchmarks and tests only. */
  readonly diagnosticsTools?: boolean;
  /** How often a wait reports progress; tests shorten it. */
  readonly progressIntervalMs?: number;
  /** WebSocket heartbeat (ping) interval; a peer silent for one interval is dropped. Tests shorten it. */
  readonly wsHeartbeatMs?: number;
  readonly log?: (line: string) => void;
  /** The built web UI served at `/`. Default dist/ui of this checkout (npm run build makes it). */
  readonly uiDir?: string;
  /** The scheduler's clock and timers (docs/schedules.md); tests pass a manual clock. Default: Date.now and setTimeout. */
  readonly clock?: () => number;
  readonly schedulerTimers?: SchedulerTimers;
  /** A PostgreSQL URL: overrides the config's database.url (docs/postgres.md). Default: SQLite in the state dir. */
  readonly database?: string;
  /** The log file's level; overrides the config's log.level. */
  readonly logLevel?: LogLevel;
  /**
   * Drivers that replace the built-in ones of the same name: tests only, for
   * a driver on a fake SDK boundary whose agent cannot run offline (cursor).
   */
  readonly drivers?: readonly ProviderDriver[];
  /** The ACP registry `/api/providers` reads (a file or URL). Default: LOOM_ACP_REGISTRY, else the official registry. */
  readonly acpRegistry?: string;
}

/** dist/ui, two folders up from this module in src/server/ and dist/server/ alike. */
const BUILT_UI_DIR = fileURLToPath(new URL("../../dist/ui/", import.meta.url));

export interface LoomServer {
  readonly url: string;
  readonly mcpUrl: string;
  readonly environmentId: string;
  readonly orchestrator: Orchestrator;
  readonly config: LoomConfig;
  readonly credentials: StoredCredentialRegistry;
  /** This process in the node registry (`loom:<pid>:<boot id>`); also its outbox lease owner. */
  readonly nodeId: string;
  readonly nodes: NodeRegistry;
  readonly sessions: ProviderSessionManager;
  readonly stateDir: StateDir;
  /** The server's log file (`<state-dir>/logs/loom.log`). */
  readonly logPath: string;
  /** Open MCP sessions (agents' and outside clients'). */
  readonly mcpSessionCount: number;
  /** The search index projection (t3_thread_search), kept in `<state-dir>/search.db`. */
  readonly search: SearchProjection;
  /** Title regeneration turns in flight (t3_thread_update regenerate_title). */
  readonly titles: TitleRegenerations;
  /** Waits holding delegated tasks (delegate_task, t3_background_wait), so tests can wait for one to begin. */
  readonly waiters: TaskWaiters;
  /** Fires timed scheduled tasks. */
  readonly scheduler: Scheduler;
  /** Trace export (docs/telemetry.md); `live` is null while it is off. */
  readonly traces: TraceWiring;
  /**
   * Resolves once the node stopped itself because it lost its leases (another
   * node declared it lost, or the database stayed unreachable): its agent
   * processes are stopped and the server closed. Never settles otherwise.
   */
  readonly halted: Promise<NodeLostError>;
  close(): Promise<void>;
}

/**
 * Open the state dir, replay and reconcile the log, listen, and publish
 * server.json. Everything the server reports also goes to its log file; a
 * refused start is written there before the file is closed.
 */
export async function startLoomServer(options: LoomServerOptions): Promise<LoomServer> {
  const dir = openStateDir(options.stateDir);
  const serverLog = openServerLog(dir.root, { ...DEFAULT_LOG, level: options.logLevel ?? DEFAULT_LOG.level });
  try {
    return await startWithLog(options, dir, serverLog);
  } catch (error) {
    serverLog.write("error", `loom: start refused: ${error instanceof Error ? error.message : String(error)}`);
    await serverLog.close();
    throw error;
  }
}

async function startWithLog(options: LoomServerOptions, dir: StateDir, serverLog: ServerLog): Promise<LoomServer> {
  const cwd = options.cwd ?? process.cwd();
  const config = loadConfig(options.configPath, dir.root, cwd);
  serverLog.configure({ ...config.log, level: options.logLevel ?? config.log.level });
  const log = (line: string): void => {
    options.log?.(line);
    serverLog.write(levelOfLine(line), line);
  };
  const drivers = builtInDrivers({ stateDir: dir.root, log });
  for (const driver of options.drivers ?? []) drivers.set(driver.driver, driver);
  const problems = validateProviderInstances(config.providers, drivers);
  if (problems.length > 0) {
    const lines = problems.flatMap((p) => p.errors.map((error) => `  providers.${p.instanceId}: ${error}`));
    throw new ConfigError(ConfigErrorCode.invalid, `invalid provider configuration (${lines.length} problem${lines.length === 1 ? "" : "s"}):\n${lines.join("\n")}`);
  }
  if (config.scheduler.timeZone !== null && !isTimeZone(config.scheduler.timeZone)) {
    throw new ConfigError(ConfigErrorCode.invalid, `invalid config: scheduler.timeZone ${JSON.stringify(config.scheduler.timeZone)} is not an IANA time zone this runtime knows`);
  }
  const telemetry = telemetrySettings(config, (secret) => serverLog.addSecret(secret));
  const ownerToken = ensureOwnerToken(dir);
  serverLog.addSecret(ownerToken);
  const registry = new ProviderRegistry(config.providers, drivers);
  const backend = await openNodeBackend(dir, options.database === undefined ? config.database : { ...config.database, url: options.database }, log);
  const { store, nodes } = backend;
  const bootId = crypto.randomUUID();
  const nodeId = `loom:${process.pid}:${bootId}`;
  // Nodes sharing a database share one environment: the first node's id.
  const environmentId = await nodes.sharedSetting("environment-id", ensureEnvironmentId(dir));
  const credentials = new StoredCredentialRegistry({ store: backend.credentials, environmentId, nodeId, idleTtlMs: config.credentials.idleTtlMs, maxLifetimeMs: config.credentials.maxLifetimeMs });
  await credentials.registerOwnerToken(ownerToken);
  const orchestrator = await Orchestrator.open({ store, providers: providerFacts(registry), limits: config.limits, turnCheckpoints: config.workspaces.checkpoints });
  const traces = await openTraceWiring(telemetry, { orchestrator, version: LOOM_VERSION, log });
  const workspaces: WorkspaceSettings = {
    worktreesRoot: config.workspaces.worktreesDir ?? join(dir.root, "worktrees"),
    branchPrefix: config.workspaces.branchPrefix,
    fallbackRoot: cwd,
    setupRunDir: join(dir.root, "run", "setup"),
  };
  const workspaceLayout = { orchestrator, workspaces, projects: config.projects };
  // Before runs are reconciled: worktrees a cut-short preparation made are recorded on their thread first.
  const workspaceReport = await reconcileWorkspacesOnBoot(workspaceLayout, bootId, log);
  if (workspaceReport.adopted + workspaceReport.removedHalfMade + workspaceReport.stoppedSetups > 0) {
    log(`loom: workspaces after restart: ${workspaceReport.adopted} worktree(s) recorded, ${workspaceReport.removedHalfMade} half-made removed, ${workspaceReport.stoppedSetups} setup(s) stopped`);
  }
  // On a shared database the other nodes' runs are theirs: a lost node's work is taken over by NodeHeartbeats instead.
  if (!backend.shared) {
    await credentials.revokeAllThreadCredentials();
    const report = await reconcileOnBoot(orchestrator, store, bootId);
    if (report.interruptedRuns > 0 || report.lostEffects > 0) {
      log(`loom: reconciled after restart: ${report.interruptedRuns} run(s) interrupted, ${report.lostEffects} effect(s) lost`);
    }
  }

  let mcpUrl = "";
  let baseUrl = "";
  const secrets = new SecretVault();
  const projects = new Map(config.projects.map((p) => [p.id, p.root]));
  const pools = new WarmPools({ registry, log, sessionLog: (level, line) => serverLog.write(level, line), homes: (providerInstanceId) => join(dir.root, "agents", providerInstanceId) });
  const sessions = new ProviderSessionManager({
    pools,
    orchestrator,
    registry,
    credentials,
    environmentId,
    mcpUrl: () => mcpUrl,
    workingDirectory: (thread) => thread.worktreePath ?? projects.get(thread.projectId) ?? cwd,
    idleMs: config.sessions.idleMs,
    stalledMs: config.sessions.stalledMs,
    log,
    sessionLog: (level, line) => serverLog.write(level, line),
    agentHome: (providerInstanceId, threadId) => join(dir.root, "agents", providerInstanceId, agentHomeName(threadId)),
    forgetAgentHomes: (threadId) => forgetAgentHomes(join(dir.root, "agents"), threadId),
    secrets,
    traceEnvironment: (runId) => traces.traceEnvironment(runId),
  });
  const workspaceEffects = new WorkspaceEffects({ ...workspaceLayout, log });
  const workspaceHandlers = workspaceEffects.handlers();
  const worker = new OutboxWorker({
    store,
    handlers: { ...sessions.handlers(), ...workspaceHandlers },
    owner: nodeId,
    ...(backend.shared ? { leaseMs: config.nodes.leaseMs, skipStreams: () => nodes.threadsHeldElsewhere(nodeId), beforeRun: () => orchestrator.syncWithLog() } : {}),
    onFailed: (row, error) => (Object.hasOwn(workspaceHandlers, row.kind) ? workspaceEffects.onEffectFailed(row, error) : sessions.onEffectFailed(row, error)),
    log,
  });
  // Only a commit that wrote outbox rows gives the worker work; retries and expired leases are its poll's.
  const stopKicking = orchestrator.onCommitted((_events, wroteEffects) => {
    if (wroteEffects) worker.kick();
  });
  const waiters = new TaskWaiters();
  const reactor = new DelegationReactor(orchestrator, waiters, log);
  const budgets = new BudgetReactor(orchestrator, Date.now, log);
  const search = new SearchProjection(orchestrator, SqliteSearchIndex.open(join(dir.root, "search.db")), log);
  const titles = new TitleRegenerations(config.titles, log);

  const app: AppContext = {
    orchestrator,
    registry,
    environmentId,
    projects: config.projects,
    scratchRoot: join(dir.root, "scratch"),
    maxWaitMs: config.waits.maxWaitMs,
    progressIntervalMs: options.progressIntervalMs ?? 5_000,
    clock: options.clock ?? Date.now,
    waiters,
    search,
    secrets: { vault: secrets, isSessionLive: (providerSessionId) => sessions.isSessionLive(providerSessionId) },
    titles,
    workspaces,
    heldSessions: () => sessions.held().map((s) => ({ providerSessionId: s.providerSessionId, lastActivityAt: s.lastActivityAt, resumed: s.resumed, fromPool: s.fromPool })),
    warmSessions: () => pools.held(),
    providerCatalog: {
      stateDir: dir.root,
      configPath: options.configPath === undefined ? resolve(dir.root, DEFAULT_CONFIG_FILE) : resolve(cwd, options.configPath),
      ...(options.acpRegistry === undefined ? {} : { registry: options.acpRegistry }),
      driver: drivers.get("acp")!,
      // A prepared instance is this server's at once; other nodes sharing the log read it on restart.
      onPrepared: (instance) => registry.register(instance),
    },
    schedules: {
      keys: new FileWebhookKeyStore(join(dir.root, "webhook-keys.json")),
      baseUrl: () => baseUrl,
      minIntervalMs: config.scheduler.minIntervalMs,
      timeZone: schedulerTimeZone(config.scheduler.timeZone),
      webhookMaxBodyBytes: config.scheduler.webhookMaxBodyBytes,
    },
  };
  const workflows = new WorkflowRunner(app, { log, maxConcurrentAgents: config.workflows.maxConcurrentAgents });
  const scheduler = new Scheduler({ app, log, ...(options.schedulerTimers === undefined ? {} : { timers: options.schedulerTimers }) });
  const pullRequests = new PullRequestWatcher({ app, log, ...(options.schedulerTimers === undefined ? {} : { timers: options.schedulerTimers }) });
  const titlesReconciled = await reconcileTitleRegenerations(app);
  if (titlesReconciled > 0) log(`loom: reconciled after restart: ${titlesReconciled} title regeneration(s) completed with the first-line title`);
  const toolkits = [
    threadToolkit(app),
    delegationToolkit(app),
    threadControlToolkit(app),
    searchToolkit(app),
    backgroundToolkit(app),
    secretsToolkit(app),
    schedulesToolkit(app),
    workflowsToolkit(app, workflows),
    ...(options.diagnosticsTools === true ? [diagnosticsToolkit] : []),
  ];
  const mcp = createMcpRoute({ credentials, toolkits, version: LOOM_VERSION, log });
  // A run that ended with nothing queued releases its agent's MCP sessions (and their sockets) at once.
  const idleSessions = followIdleSessions(orchestrator, (providerSessionId) => {
    mcp.closeForProviderSession(providerSessionId).catch((error: unknown) => log(`loom: closing MCP sessions of ${providerSessionId} failed: ${String(error)}`));
  });
  let halt: (error: NodeLostError) => void = () => undefined;
  const halted = new Promise<NodeLostError>((resolve) => {
    halt = (error) => {
      // No new effect is claimed, and no agent runs on: the node that takes this one over ends its runs.
      const stopping = worker.stop();
      void sessions
        .abandon()
        .then(() => stopping)
        .then(() => close())
        .catch((closeError: unknown) => log(`loom: closing after losing the leases: ${closeError instanceof Error ? closeError.message : String(closeError)}`))
        .then(() => resolve(error));
    };
  });
  const heartbeats = new NodeHeartbeats({ nodeId, nodes, credentials, orchestrator, store, config: config.nodes, log, onLost: (error) => halt(error) });
  const tickets = new WsTicketBook();
  let origins: readonly string[] = [];
  let url = "";
  const uiSessions = new UiSessionBook({ file: join(dir.root, "ui-sessions.json") });
  const routes: RouteHandler[] = [
    // Before orchestrationRoutes, which answers every other /api/ path with 404.
    secretRoutes({ app, ownerTokenHash: sha256(ownerToken) }),
    workspaceRoutes({ app, ownerTokenHash: sha256(ownerToken) }),
    uiRoutes({ app, ownerTokenHash: sha256(ownerToken), sessions: uiSessions, allowedOrigins: () => origins, baseUrl: () => url }),
    scheduleRoutes({ app, ownerTokenHash: sha256(ownerToken), alsoOwner: (req) => isUiSessionRequest(req, uiSessions, () => origins) }),
    nodeRoutes({
      ownerTokenHash: sha256(ownerToken),
      report: () => nodesReport({ self: nodeId, leaseMs: config.nodes.leaseMs, nodes, credentials, store, now: Date.now() }),
    }),
    orchestrationRoutes({ app, ownerTokenHash: sha256(ownerToken), version: LOOM_VERSION, tickets, alsoOwner: (req) => isUiSessionRequest(req, uiSessions, () => origins) }),
    mcp.route,
    // Last: the web UI's files (docs/ui.md) at every path the routes above leave.
    staticFiles({ root: options.uiDir ?? BUILT_UI_DIR, reserved: (path) => path.startsWith("/api/") || path === "/mcp" || path.startsWith("/mcp/") }),
  ];
  const ws = createWsEndpoint({ app, ownerTokenHash: sha256(ownerToken), tickets, allowedOrigins: () => origins, heartbeatMs: options.wsHeartbeatMs, log });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loom.invalid");
    void handle(routes, req, res, url, log);
  });
  server.on("upgrade", (req, socket, head) => ws.handleUpgrade(req, socket, head));
  const host = options.host ?? "127.0.0.1";
  await listen(server, host, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  origins = ownOrigins(host, port, url);
  mcpUrl = `${url}/mcp`;
  baseUrl = url;
  await nodes.register({ nodeId, url, pid: process.pid, hostname: nodeHostname(), startedAt: Date.now() });
  await heartbeats.start();
  await traces.start();
  worker.start();
  await reactor.start();
  await budgets.start();
  // The index catches up in the background; searches wait briefly for it and say when it is not complete yet.
  search.start().catch((error: unknown) => log(`loom: the search index could not start: ${error instanceof Error ? error.message : String(error)}`));
  sessions.startReaper();
  pools.start(config.providers);
  await scheduler.start();
  await pullRequests.start();
  await workflows.start();
  writeServerInfo(dir, { url, mcpUrl, pid: process.pid, environmentId, startedAt: new Date().toISOString() });
  log(`loom ${LOOM_VERSION} listening on ${url} (state: ${dir.root})`);
  void reportProviders(registry, log);
  let closing: Promise<void> | null = null;
  function close(): Promise<void> {
    closing ??= (async () => {
      await scheduler.stop();
      await pullRequests.stop();
      await workflows.stop();
      idleSessions.close();
      await mcp.close();
      await ws.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      reactor.stop();
      budgets.stop();
      await titles.close();
      // Stop claiming effects first: releasing a session ends its run and starts the
      // thread's next queued one, whose provider.turn.start must not open a new session.
      await worker.stop();
      await sessions.shutdown();
      // Hand the node's leases back at once: its sessions ended above, its credentials end here.
      await heartbeats.stop();
      stopKicking();
      await traces.stop();
      await search.stop();
      await orchestrator.close();
      await backend.credentials.close();
      removeServerInfo(dir, process.pid);
      serverLog.write("info", "loom: stopped");
      await serverLog.close();
    })();
    return closing;
  }
  return {
    url,
    mcpUrl,
    environmentId,
    orchestrator,
    config,
    credentials,
    nodeId,
    nodes,
    sessions,
    stateDir: dir,
    logPath: serverLog.path,
    get mcpSessionCount() {
      return mcp.sessionCount;
    },
    search,
    titles,
    waiters,
    scheduler,
    traces,
    halted,
    close,
  };
}

/** A reported line's level in the log file: failures are warnings, the rest information. */
function levelOfLine(line: string): LogLevel {
  return /\b(failed|error|could not|refused)\b/i.test(line) ? "warn" : "info";
}

async function handle(routes: readonly RouteHandler[], req: Parameters<RouteHandler>[0], res: Parameters<RouteHandler>[1], url: URL, log: (line: string) => void): Promise<void> {
  try {
    for (const route of routes) {
      if (await route(req, res, url)) return;
    }
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${url.pathname}`);
  } catch (error) {
    if (res.headersSent) {
      res.end();
      return;
    }
    if (error instanceof HttpError) {
      sendError(res, error);
      return;
    }
    log(`loom: internal error on ${req.method ?? "?"} ${url.pathname}: ${(error as Error).stack ?? String(error)}`);
    sendError(res, new HttpError(500, "internal_error", "internal server error"));
  }
}

/** The origins a browser may open the WebSocket from: the server's own URL, and its localhost spelling on loopback. */
function ownOrigins(host: string, port: number, url: string): string[] {
  const loopback = host === "127.0.0.1" || host === "::1" || host === "localhost";
  return loopback ? [url, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`].filter((o, i, all) => all.indexOf(o) === i) : [url];
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
