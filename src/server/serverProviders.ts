import { join } from "node:path";
import type { LogLevel } from "../config/config.js";
import { WorkspaceEffects } from "../app/workspaces/effects.js";
import { agentWorktreeEnvironment } from "../app/workspaces/isolation.js";
import { OutboxWorker } from "../engine/outboxWorker.js";
import { SecretVault } from "../providers/secretVault.js";
import { ProviderSessionManager } from "../providers/sessionManager.js";
import { WarmPools } from "../providers/warmPool.js";
import { agentHomeName, forgetAgentHomes } from "./agentHomes.js";
import type { ServerBackend } from "./serverBackend.js";
import type { ServerConfig } from "./serverConfig.js";
import type { ServerEngine } from "./serverEngine.js";
import type { ServerLog } from "./serverLog.js";
import type { StateDir } from "./stateDir.js";
import type { TraceWiring } from "./telemetryWiring.js";

/** What runs the outbox's effects: agents' sessions (warm or not) and the workspace effects, claimed by one worker. */
export interface ServerProviders {
  readonly secrets: SecretVault;
  readonly pools: WarmPools;
  readonly sessions: ProviderSessionManager;
  readonly worker: OutboxWorker;
}

/**
 * The provider sessions, their warm pools and the outbox worker that drives
 * them and the workspace effects. Nothing starts here: the worker, the
 * reaper and the pools start once the server listens. `mcpUrl` is read when
 * an agent starts, by then the server's.
 */
export function buildProviders(dir: StateDir, setup: ServerConfig, base: ServerBackend, engine: ServerEngine, serverLog: ServerLog, mcpUrl: () => string, traces: TraceWiring): ServerProviders {
  const { config, registry, log } = setup;
  const { orchestrator } = engine;
  const { backend, nodeId } = base;
  const sessionLog = (level: LogLevel, line: string): void => serverLog.write(level, line);
  const secrets = new SecretVault();
  const projects = new Map(config.projects.map((p) => [p.id, p.root]));
  const pools = new WarmPools({ registry, log, sessionLog, homes: (providerInstanceId) => join(dir.root, "agents", providerInstanceId) });
  const sessions = new ProviderSessionManager({
    pools,
    orchestrator,
    registry,
    credentials: base.credentials,
    environmentId: base.environmentId,
    mcpUrl,
    workingDirectory: (thread) => thread.worktreePath ?? projects.get(thread.projectId) ?? setup.cwd,
    idleMs: config.sessions.idleMs,
    stalledMs: config.sessions.stalledMs,
    log,
    sessionLog,
    agentHome: (providerInstanceId, threadId) => join(dir.root, "agents", providerInstanceId, agentHomeName(threadId)),
    forgetAgentHomes: (threadId) => forgetAgentHomes(join(dir.root, "agents"), threadId),
    secrets,
    traceEnvironment: (runId) => traces.traceEnvironment(runId),
    workspaceEnvironment: (thread) => agentWorktreeEnvironment(engine.workspaces, thread),
  });
  const workspaceEffects = new WorkspaceEffects({ orchestrator, workspaces: engine.workspaces, projects: config.projects, log });
  const workspaceHandlers = workspaceEffects.handlers();
  const worker = new OutboxWorker({
    store: backend.store,
    handlers: { ...sessions.handlers(), ...workspaceHandlers },
    owner: nodeId,
    ...(backend.shared ? { leaseMs: config.nodes.leaseMs, skipStreams: () => backend.nodes.threadsHeldElsewhere(nodeId), beforeRun: () => orchestrator.syncWithLog() } : {}),
    onFailed: (row, error) => (Object.hasOwn(workspaceHandlers, row.kind) ? workspaceEffects.onEffectFailed(row, error) : sessions.onEffectFailed(row, error)),
    log,
  });
  engine.wakeOutbox(worker);
  return { secrets, pools, sessions, worker };
}
