/**
 * One Loom node writing for bench/postgresNodesBench.ts: an Orchestrator on
 * its own PostgresEventStore. The job comes as JSON in LOOM_NODE_WRITER
 * (a connection string holds a password): { url, schema, label, threads }.
 * It prints `ready` once open, dispatches its commands (two per thread, 1,000
 * in flight) when a line arrives on stdin, then prints `done <µs>` (the CPU
 * time it used since the go line, user + system) and exits.
 */
import { createInterface } from "node:readline";
import type { Command } from "../src/contracts/commands.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { PostgresEventStore } from "../src/store/postgres/postgresEventStore.js";

const IN_FLIGHT = 1_000;

interface WriterJob {
  readonly url: string;
  readonly schema: string;
  readonly label: string;
  readonly threads: number;
}

function commandsFor(label: string, index: number): Command[] {
  const threadId = `thread:bench-${label}-${index}`;
  return [
    { type: "thread.create", commandId: `cmd:create:${label}:${index}`, data: { threadId, projectId: "bench", title: `Thread ${index}` } },
    { type: "thread.metadata.update", commandId: `cmd:title:${label}:${index}`, data: { threadId, title: `Renamed ${index}` } },
  ];
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.LOOM_NODE_WRITER ?? "null") as WriterJob | null;
  if (job === null) throw new Error("LOOM_NODE_WRITER is not set");
  const orchestrator = await Orchestrator.open({ store: await PostgresEventStore.open(job.url, { schema: job.schema }) });
  const commands = Array.from({ length: job.threads }, (_, i) => commandsFor(job.label, i)).flat();
  const lines = createInterface({ input: process.stdin });
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => lines.once("line", () => resolve()));
  lines.close();
  const cpuAtGo = process.cpuUsage();
  for (let i = 0; i < commands.length; i += IN_FLIGHT) {
    const receipts = await Promise.all(commands.slice(i, i + IN_FLIGHT).map((command) => orchestrator.dispatch(command)));
    if (receipts.some((receipt) => receipt.status !== "accepted")) throw new Error("benchmark command rejected");
  }
  const cpu = process.cpuUsage(cpuAtGo);
  process.stdout.write(`done ${cpu.user + cpu.system}\n`);
  await orchestrator.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
