/**
 * A process that commits to a shared event store, for tests of several
 * writers: `commits` commands of `eventsPerCommit` events each, as fast as it
 * can, then prints `done <last sequence>` and exits. The job comes as JSON in
 * LOOM_STORE_WRITER (kept out of argv: a connection string holds a password):
 *   { "backend": "sqlite", "file": "...", "commits": 100, "eventsPerCommit": 2, "label": "w1" }
 *   { "backend": "postgres", "url": "postgres://...", "schema": "s1", ... }
 * Usage: node dist-test/testkit/storeWriter.js
 */
import type { EventStore } from "../store/eventStore.js";
import { PostgresEventStore } from "../store/postgres/postgresEventStore.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";

interface WriterJob {
  readonly backend: "sqlite" | "postgres";
  readonly file?: string;
  readonly url?: string;
  readonly schema?: string;
  readonly commits: number;
  readonly eventsPerCommit: number;
  readonly label: string;
}

async function open(job: WriterJob): Promise<EventStore> {
  if (job.backend === "sqlite") return SqliteEventStore.open(job.file ?? "");
  return PostgresEventStore.open(job.url ?? "", { schema: job.schema });
}

async function run(): Promise<void> {
  const job = JSON.parse(process.env.LOOM_STORE_WRITER ?? "null") as WriterJob | null;
  if (job === null) throw new Error("LOOM_STORE_WRITER is not set");
  const store = await open(job);
  let last = 0;
  for (let index = 0; index < job.commits; index += 1) {
    const events = Array.from({ length: job.eventsPerCommit }, (_, n) => ({
      type: "test.happened",
      streamId: `thread:${job.label}`,
      data: { writer: job.label, index, n },
    }));
    const [result] = await store.commit([
      {
        receipt: { status: "accepted", commandId: `cmd:${job.label}:${index}`, commandType: "test.command", acceptedAt: new Date().toISOString() },
        events,
        outbox: [],
      },
    ]);
    if (result?.receipt.status === "accepted") last = result.receipt.sequence;
  }
  await store.close();
  process.stdout.write(`done ${last}\n`);
}

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
