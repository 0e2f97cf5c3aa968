import { afterAll, beforeAll } from "vitest";
import { startTestPostgres, type PostgresCluster, type PostgresClusterOptions } from "./postgresCluster.js";

/** What a PostgreSQL test file gets: its cluster and a database of its own. */
export interface PostgresTestDatabase {
  readonly cluster: PostgresCluster;
  /** Connection string of the file's fresh database. */
  readonly url: string;
}

/**
 * A PostgreSQL cluster and a fresh database for the calling test file:
 * started before its first test, dropped, stopped and removed after its last.
 * Tests that need a fresh log inside it use a schema each (the store's
 * `schema` option), which costs milliseconds where a database costs a second.
 * When no server binaries are installed the start fails, and with it every
 * test of the file, with a message that says how to install them: PostgreSQL
 * tests never skip.
 */
export function usePostgresDatabase(options: PostgresClusterOptions = {}): () => PostgresTestDatabase {
  let current: PostgresTestDatabase | null = null;
  let cluster: PostgresCluster | null = null;
  beforeAll(async () => {
    cluster = await startTestPostgres(options);
    current = { cluster, url: await cluster.createDatabase() };
  }, 120_000);
  afterAll(async () => {
    if (current !== null) await current.cluster.dropDatabase(current.url);
    await cluster?.stop();
  }, 60_000);
  return () => {
    if (current === null) throw new Error("the PostgreSQL test cluster did not start (see the beforeAll failure)");
    return current;
  };
}
