import type { LoomConfig } from "../config/config.js";
import { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import { type NodeBackend, openNodeBackend } from "./nodeBackend.js";
import type { ServerLog } from "./serverLog.js";
import { type StateDir, ensureEnvironmentId, ensureOwnerToken } from "./stateDir.js";

/** The opened database and who this process is on it. */
export interface ServerBackend {
  readonly backend: NodeBackend;
  /** This boot (boot reconciliation stamps what it ends with it). */
  readonly bootId: string;
  /** This process in the node registry (`loom:<pid>:<boot id>`); also its outbox lease owner. */
  readonly nodeId: string;
  /** Nodes sharing a database share one environment: the first node's id. */
  readonly environmentId: string;
  readonly ownerToken: string;
  readonly credentials: StoredCredentialRegistry;
}

/**
 * Open the log, credentials and node registry (SQLite in the state dir, or
 * the PostgreSQL of `database`), and register the owner token. The token is
 * added to the log's secrets first, so no line ever shows it.
 */
export async function openServerBackend(dir: StateDir, config: LoomConfig, database: string | undefined, serverLog: ServerLog, log: (line: string) => void): Promise<ServerBackend> {
  const ownerToken = ensureOwnerToken(dir);
  serverLog.addSecret(ownerToken);
  const backend = await openNodeBackend(dir, database === undefined ? config.database : { ...config.database, url: database }, log);
  const bootId = crypto.randomUUID();
  const nodeId = `loom:${process.pid}:${bootId}`;
  const environmentId = await backend.nodes.sharedSetting("environment-id", ensureEnvironmentId(dir));
  const credentials = new StoredCredentialRegistry({
    store: backend.credentials,
    environmentId,
    nodeId,
    idleTtlMs: config.credentials.idleTtlMs,
    maxLifetimeMs: config.credentials.maxLifetimeMs,
  });
  await credentials.registerOwnerToken(ownerToken);
  return { backend, bootId, nodeId, environmentId, ownerToken, credentials };
}
