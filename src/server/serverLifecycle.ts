import { LOOM_VERSION } from "../version.js";
import { instanceCrashPolicy } from "../engine/reconcile.js";
import { nodeHostname } from "./nodeBackend.js";
import { NodeHeartbeats, type NodeLostError } from "./nodeHeartbeats.js";
import { reportProviders } from "./providerReport.js";
import type { ServerApp } from "./serverApp.js";
import type { ServerBackend } from "./serverBackend.js";
import type { ServerConfig } from "./serverConfig.js";
import type { ServerEngine } from "./serverEngine.js";
import type { ServerLog } from "./serverLog.js";
import type { ServerProviders } from "./serverProviders.js";
import type { ServerReactors } from "./serverReactors.js";
import type { ServerAddress, ServerTransports } from "./serverTransports.js";
import { type StateDir, removeServerInfo, writeServerInfo } from "./stateDir.js";
import type { TraceWiring } from "./telemetryWiring.js";

/** Every built part of a server, started and stopped here in the orders they need. */
export interface ServerParts {
  readonly dir: StateDir;
  readonly serverLog: ServerLog;
  readonly setup: ServerConfig;
  readonly base: ServerBackend;
  readonly engine: ServerEngine;
  /** Trace export: follows the log once serving starts (docs/telemetry.md). */
  readonly traces: TraceWiring;
  readonly providers: ServerProviders;
  readonly reactors: ServerReactors;
  readonly app: ServerApp;
  readonly transports: ServerTransports;
  readonly heartbeats: NodeHeartbeats;
}

/**
 * The node's heartbeats, and what it does when it lost its leases (another
 * node declared it lost, or the database stayed unreachable): no new effect
 * is claimed and no agent runs on, since the node that takes this one over
 * ends its runs; then the server closes and `halted` resolves.
 */
export function buildHeartbeats(
  setup: ServerConfig,
  base: ServerBackend,
  engine: ServerEngine,
  providers: ServerProviders,
  close: () => Promise<void>,
): { readonly heartbeats: NodeHeartbeats; readonly halted: Promise<NodeLostError> } {
  let halt: (error: NodeLostError) => void = () => undefined;
  const halted = new Promise<NodeLostError>((resolve) => {
    halt = (error) => {
      const stopping = providers.worker.stop();
      void providers.sessions
        .abandon()
        .then(() => stopping)
        .then(() => close())
        .catch((closeError: unknown) => setup.log(`loom: closing after losing the leases: ${closeError instanceof Error ? closeError.message : String(closeError)}`))
        .then(() => resolve(error));
    };
  });
  const { backend, nodeId, credentials } = base;
  const heartbeats = new NodeHeartbeats({
    nodeId,
    nodes: backend.nodes,
    credentials,
    orchestrator: engine.orchestrator,
    store: backend.store,
    config: setup.config.nodes,
    onCrash: instanceCrashPolicy(setup.config.providers),
    log: setup.log,
    onLost: (error) => halt(error),
  });
  return { heartbeats, halted };
}

/**
 * Listen, join the node registry, then start what follows the log and runs
 * work, and publish server.json once all of it runs.
 */
export async function startServing(parts: ServerParts, address: ServerAddress, host: string, port: number): Promise<void> {
  const { dir, setup, base, providers, reactors, app, transports } = parts;
  const { log } = setup;
  await transports.listen(host, port);
  await base.backend.nodes.register({ nodeId: base.nodeId, url: address.url, pid: process.pid, hostname: nodeHostname(), startedAt: Date.now() });
  await parts.heartbeats.start();
  await parts.traces.start();
  providers.worker.start();
  await reactors.reactor.start();
  await reactors.budgets.start();
  await reactors.mergeQueue.start();
  // The index catches up in the background; searches wait briefly for it and say when it is not complete yet.
  reactors.search.start().catch((error: unknown) => log(`loom: the search index could not start: ${error instanceof Error ? error.message : String(error)}`));
  providers.sessions.startReaper();
  providers.pools.start(setup.config.providers);
  await app.scheduler.start();
  await app.pullRequests.start();
  await app.limitResumes.start();
  await app.backgroundSettles.start();
  await app.workflows.start();
  writeServerInfo(dir, { url: address.url, mcpUrl: address.mcpUrl, pid: process.pid, environmentId: base.environmentId, startedAt: new Date().toISOString() });
  log(`loom ${LOOM_VERSION} listening on ${address.url} (state: ${dir.root})`);
  void reportProviders(setup.registry, log);
}

/** Stop everything, newest work first, the log and its file last. */
export async function stopServing(parts: ServerParts): Promise<void> {
  const { dir, serverLog, base, engine, providers, reactors, app, transports } = parts;
  await app.scheduler.stop();
  await app.pullRequests.stop();
  await app.limitResumes.stop();
  await app.backgroundSettles.stop();
  await app.workflows.stop();
  transports.idleSessions.close();
  await transports.mcp.close();
  transports.guestSocket.close();
  await transports.ws.close();
  transports.http.closeAllConnections();
  await new Promise<void>((resolve) => transports.http.close(() => resolve()));
  reactors.reactor.stop();
  reactors.budgets.stop();
  reactors.mergeQueue.stop();
  await app.titles.close();
  // Stop claiming effects first: releasing a session ends its run and starts the
  // thread's next queued one, whose provider.turn.start must not open a new session.
  await providers.worker.stop();
  await providers.sessions.shutdown();
  // Hand the node's leases back at once: its sessions ended above, its credentials end here.
  await parts.heartbeats.stop();
  await parts.traces.stop();
  await reactors.search.stop();
  await engine.orchestrator.close();
  await base.backend.credentials.close();
  app.webhookDeliveries.close();
  removeServerInfo(dir, process.pid);
  serverLog.write("info", "loom: stopped");
  await serverLog.close();
}
