import { DEFAULT_LOG, type LoomConfig } from "../config/config.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { SearchProjection } from "../engine/searchProjection.js";
import type { TitleRegenerations } from "../app/threads/titleRegeneration.js";
import type { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import type { ProviderSessionManager } from "../providers/sessionManager.js";
import type { Scheduler } from "../scheduler/scheduler.js";
import type { NodeRegistry } from "../store/nodes/nodeRegistry.js";
import type { NodeLostError } from "./nodeHeartbeats.js";
import { buildApp } from "./serverApp.js";
import { openServerBackend } from "./serverBackend.js";
import { loadServerConfig } from "./serverConfig.js";
import { openEngine } from "./serverEngine.js";
import { type ServerParts, buildHeartbeats, startServing, stopServing } from "./serverLifecycle.js";
import { type ServerLog, openServerLog } from "./serverLog.js";
import type { LoomServerOptions } from "./serverOptions.js";
import { buildProviders } from "./serverProviders.js";
import { buildReactors } from "./serverReactors.js";
import { ServerAddress, buildTransports } from "./serverTransports.js";
import { type StateDir, openStateDir } from "./stateDir.js";
import { type TraceWiring, openTraceWiring, telemetrySettings } from "./telemetryWiring.js";
import { LOOM_VERSION } from "../version.js";

export type { LoomServerOptions } from "./serverOptions.js";

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

/** The start in its steps, each built on the ones before it; then serving, and closing in the reverse order. */
async function startWithLog(options: LoomServerOptions, dir: StateDir, serverLog: ServerLog): Promise<LoomServer> {
  const setup = loadServerConfig(options, dir, serverLog);
  const telemetry = telemetrySettings(setup.config, (secret) => serverLog.addSecret(secret));
  const base = await openServerBackend(dir, setup.config, options.database, serverLog, setup.log);
  const engine = await openEngine(dir, setup, base);
  const traces = await openTraceWiring(telemetry, { orchestrator: engine.orchestrator, version: LOOM_VERSION, log: setup.log });
  const address = new ServerAddress();
  const providers = buildProviders(dir, setup, base, engine, serverLog, () => address.mcpUrl, traces);
  const reactors = buildReactors(dir, setup, engine);
  const app = await buildApp(dir, options, { setup, base, engine, providers, reactors }, () => address.url);
  const transports = buildTransports(dir, options, { setup, base, engine, app }, address);
  const { heartbeats, halted } = buildHeartbeats(setup, base, engine, providers, () => close());
  const parts: ServerParts = { dir, serverLog, setup, base, engine, traces, providers, reactors, app, transports, heartbeats };
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => (closing ??= stopServing(parts));
  await startServing(parts, address, options.host ?? "127.0.0.1", options.port ?? 0);
  return {
    url: address.url,
    mcpUrl: address.mcpUrl,
    environmentId: base.environmentId,
    orchestrator: engine.orchestrator,
    config: setup.config,
    credentials: base.credentials,
    nodeId: base.nodeId,
    nodes: base.backend.nodes,
    sessions: providers.sessions,
    stateDir: dir,
    logPath: serverLog.path,
    get mcpSessionCount() {
      return transports.mcp.sessionCount;
    },
    search: reactors.search,
    titles: app.titles,
    scheduler: app.scheduler,
    traces,
    halted,
    close,
  };
}
