import { hostname } from "node:os";
import { join } from "node:path";
import type { CredentialStore } from "../contracts/credentialRecords.js";
import type { DatabaseConfig } from "../config/config.js";
import type { EventStore } from "../store/eventStore.js";
import { PostgresCredentialStore } from "../store/credentials/postgresCredentialStore.js";
import { SqliteCredentialStore } from "../store/credentials/sqliteCredentialStore.js";
import { LocalNodeRegistry, type NodeRegistry } from "../store/nodes/nodeRegistry.js";
import { PostgresNodeRegistry } from "../store/nodes/postgresNodeRegistry.js";
import { PostgresEventStore } from "../store/postgres/postgresEventStore.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import type { StateDir } from "./stateDir.js";

/** How long `loom serve --database` waits for PostgreSQL to accept a connection. */
const CONNECT_TIMEOUT_MS = 10_000;

/** The database could not be opened: unreachable, refused the login, or not a database at all. */
export class DatabaseUnavailableError extends Error {
  readonly code = "database_unavailable";
  override readonly name = "DatabaseUnavailableError";
}

/** Where a node keeps its log, credentials and node registry. */
export interface NodeBackend {
  readonly store: EventStore;
  readonly credentials: CredentialStore;
  readonly nodes: NodeRegistry;
  /** True on PostgreSQL: other nodes may share the database. */
  readonly shared: boolean;
  /** Label for logs, the password never included. */
  readonly label: string;
}

/**
 * SQLite in the state directory by default; PostgreSQL when a database URL
 * is given (`loom serve --database`, or `database.url` in the config).
 */
export async function openNodeBackend(dir: StateDir, database: DatabaseConfig, log?: (line: string) => void): Promise<NodeBackend> {
  if (database.url === null) {
    return {
      store: SqliteEventStore.open(dir.databasePath, log === undefined ? {} : { log }),
      credentials: SqliteCredentialStore.open(join(dir.root, "credentials.db")),
      nodes: new LocalNodeRegistry(),
      shared: false,
      label: dir.databasePath,
    };
  }
  const label = redactedUrl(database.url);
  let store: PostgresEventStore;
  try {
    store = await PostgresEventStore.open({ connectionString: database.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }, { schema: database.schema });
  } catch (error) {
    const detail = error instanceof Error ? error.message || (error as { code?: string }).code || error.name : String(error);
    throw new DatabaseUnavailableError(`cannot open the PostgreSQL database ${label} (schema ${database.schema}): ${detail}`, { cause: error });
  }
  return { store, credentials: new PostgresCredentialStore(store.connectionPool), nodes: new PostgresNodeRegistry(store.connectionPool), shared: true, label };
}

/** A database URL with its password replaced, for logs and errors. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "<malformed database URL>";
  }
}

export function nodeHostname(): string {
  return hostname();
}
