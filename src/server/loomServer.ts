import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { HttpError, type RouteHandler, sendError } from "../http/http.js";
import { orchestrationRoutes, sha256 } from "../api/routes.js";
import { workspaceRoutes } from "../api/workspaceRoutes.js";
import type { AppContext } from "../app/context.js";
import { DelegationReactor } from "../engine/delegationReactor.js";
import { TaskWaiters } from "../engine/taskWaiters.js";
import { Orchestrator } from "../engine/orchestrator.js";
import { OutboxWorker } from "../engine/outboxWorker.js";
import { reconcileOnBoot } from "../engine/reconcile.js";
import { reconcileWorkspacesOnBoot } from "../app/workspaces/boot.js";
import { WorkspaceEffects } from "../app/workspaces/effects.js";
import type { WorkspaceSettings } from "../app/workspaces/paths.js";
import { McpCredentialRegistry } from "../mcp/credentialRegistry.js";
import { createMcpRoute } from "../mcp/httpEndpoint.js";
import { delegationToolkit } from "../mcp/toolkits/delegation/tools.js";
import { diagnosticsToolkit } from "../mcp/toolkits/diagnostics/tools.js";
import { threadToolkit } from "../mcp/toolkits/threads/tools.js";
import { ConfigError, ConfigErrorCode, type LoomConfig, loadConfig } from "../config/config.js";
import { validateProviderInstances } from "../providers/kit/validateInstances.js";
import { ProviderRegistry } from "../providers/registry.js";
import { ProviderSessionManager } from "../providers/sessionManager.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { LOOM_VERSION } from "../version.js";
import { builtInDrivers, providerFacts } from "./providerWiring.js";
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
  readonly log?: (line: string) => void;
}

export interface LoomServer {
  readonly url: string;
  readonly mcpUrl: string;
  readonly environmentId: string;
  readonly orchestrator: Orchestrator;
  readonly config: LoomConfig;
  readonly credentials: McpCredentialRegistry;
  readonly sessions: ProviderSessionManager;
  readonly stateDir: StateDir;
  close(): Promise<void>;
}

/** Open the state dir, replay and reconcile the log, listen, and publish server.json. */
export async function startLoomServer(options: LoomServerOptions): Promise<LoomServer> {
  const log = options.log ?? (() => undefined);
  const cwd = options.cwd ?? process.cwd();
  const dir = openStateDir(options.stateDir);
  const config = loadConfig(options.configPath, dir.root, cwd);
  const drivers = builtInDrivers({ stateDir: dir.root, log });
  const problems = validateProviderInstances(config.providers, drivers);
  if (problems.length > 0) {
    const lines = problems.flatMap((p) => p.errors.map((error) => `  providers.${p.instanceId}: ${error}`));
    throw new ConfigError(ConfigErrorCode.invalid, `invalid provider configuration (${lines.length} problem${lines.length === 1 ? "" : "s"}):\n${lines.join("\n")}`);
  }
  const ownerToken = ensureOwnerToken(dir);
  const environmentId = ensureEnvironmentId(dir);
  const registry = new ProviderRegistry(config.providers, drivers);
  const credentials = new McpCredentialRegistry({ environmentId, idleTtlMs: config.credentials.idleTtlMs, maxLifetimeMs: config.credentials.maxLifetimeMs });
  credentials.registerOwnerToken(ownerToken);

  const store = SqliteEventStore.open(dir.databasePath);
  const orchestrator = await Orchestrator.open({ store, providers: providerFacts(registry), limits: config.limits, turnCheckpoints: config.workspaces.checkpoints });
  const bootId = crypto.randomUUID();
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
  const report = await reconcileOnBoot(orchestrator, store, bootId);
  if (report.interruptedRuns > 0 || report.lostEffects > 0) {
    log(`loom: reconciled after restart: ${report.interruptedRuns} run(s) interrupted, ${report.lostEffects} effect(s) lost`);
  }

  let mcpUrl = "";
  const projects = new Map(config.projects.map((p) => [p.id, p.root]));
  const sessions = new ProviderSessionManager({
    orchestrator,
    registry,
    credentials,
    environmentId,
    mcpUrl: () => mcpUrl,
    workingDirectory: (thread) => thread.worktreePath ?? projects.get(thread.projectId) ?? cwd,
    idleMs: config.sessions.idleMs,
    log,
  });
  const workspaceEffects = new WorkspaceEffects({ ...workspaceLayout, log });
  const workspaceHandlers = workspaceEffects.handlers();
  const worker = new OutboxWorker({
    store,
    handlers: { ...sessions.handlers(), ...workspaceHandlers },
    owner: `loom:${process.pid}:${bootId}`,
    onFailed: (row, error) => (Object.hasOwn(workspaceHandlers, row.kind) ? workspaceEffects.onEffectFailed(row, error) : sessions.onEffectFailed(row, error)),
    log,
  });
  const stopKicking = orchestrator.onCommitted(() => worker.kick());
  const waiters = new TaskWaiters();
  const reactor = new DelegationReactor(orchestrator, waiters, log);

  const app: AppContext = {
    orchestrator,
    registry,
    environmentId,
    projects: config.projects,
    scratchRoot: join(dir.root, "scratch"),
    maxWaitMs: config.waits.maxWaitMs,
    progressIntervalMs: options.progressIntervalMs ?? 5_000,
    clock: Date.now,
    waiters,
    workspaces,
  };
  const toolkits = [threadToolkit(app), delegationToolkit(app), ...(options.diagnosticsTools === true ? [diagnosticsToolkit] : [])];
  const mcp = createMcpRoute({ credentials, toolkits, version: LOOM_VERSION, log });
  const routes: RouteHandler[] = [
    workspaceRoutes({ app, ownerTokenHash: sha256(ownerToken) }),
    orchestrationRoutes({ app, ownerTokenHash: sha256(ownerToken), version: LOOM_VERSION }),
    mcp.route,
  ];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loom.invalid");
    void handle(routes, req, res, url, log);
  });
  const host = options.host ?? "127.0.0.1";
  await listen(server, host, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  mcpUrl = `${url}/mcp`;
  worker.start();
  await reactor.start();
  sessions.startReaper();
  writeServerInfo(dir, { url, mcpUrl, pid: process.pid, environmentId, startedAt: new Date().toISOString() });
  log(`loom ${LOOM_VERSION} listening on ${url} (state: ${dir.root})`);
  let closing: Promise<void> | null = null;
  return {
    url,
    mcpUrl,
    environmentId,
    orchestrator,
    config,
    credentials,
    sessions,
    stateDir: dir,
    close() {
      closing ??= (async () => {
        await mcp.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        reactor.stop();
        // Stop claiming effects first: releasing a session ends its run and starts the
        // thread's next queued one, whose provider.turn.start must not open a new session.
        await worker.stop();
        await sessions.shutdown();
        stopKicking();
        await orchestrator.close();
        removeServerInfo(dir, process.pid);
      })();
      return closing;
    },
  };
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

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
