/**
 * A process that dispatches commands in a loop until it is killed. The crash
 * test SIGKILLs it mid-stream and checks the log it leaves behind.
 * Usage: node dist-test/testkit/crashWriter.js <database-path>
 */
import { Orchestrator } from "../engine/orchestrator.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";

async function run(databasePath: string): Promise<void> {
  const store = SqliteEventStore.open(databasePath);
  const orchestrator = await Orchestrator.open({ store });
  let round = 0;
  for (;;) {
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      const threadId = `thread:crash-${process.pid}-${round}-${i}`;
      work.push(
        orchestrator.dispatch({ type: "thread.create", commandId: `cmd:create:${threadId}`, data: { threadId, projectId: "default", title: `t${i}` } }),
        orchestrator.dispatch({ type: "thread.archive", commandId: `cmd:archive:${threadId}`, data: { threadId } }),
      );
    }
    await Promise.all(work);
    round += 1;
    process.stdout.write(`committed ${round}\n`);
  }
}

run(process.argv[2] ?? "").catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
