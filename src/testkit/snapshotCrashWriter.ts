/**
 * A process that grows a log and saves a state snapshot after every round,
 * until it is killed: most of its time goes to encoding and writing
 * snapshots, so a SIGKILL lands mid-snapshot more often than not. The restart
 * test then checks that the log still opens to the right state.
 * Usage: node dist-test/testkit/snapshotCrashWriter.js <database-path>
 */
import { Orchestrator } from "../engine/orchestrator.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";

async function run(databasePath: string): Promise<void> {
  const store = SqliteEventStore.open(databasePath);
  const orchestrator = await Orchestrator.open({ store, snapshotEvery: Number.MAX_SAFE_INTEGER });
  let round = 0;
  for (;;) {
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      const threadId = `thread:snap-${round}-${i}`;
      work.push(orchestrator.dispatch({ type: "thread.create", commandId: `cmd:create:${threadId}`, data: { threadId, projectId: "default", title: `t${i} ${"x".repeat(200)}` } }));
    }
    await Promise.all(work);
    await orchestrator.snapshot();
    round += 1;
    process.stdout.write(`snapshot ${round}\n`);
  }
}

run(process.argv[2] ?? "").catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
