import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { StoredEvent } from "../src/contracts/envelopes.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { printTable } from "./stats.js";

/**
 * What message.updated and plan.updated add to the event log
 * (docs/benchmarks.md, "Message and plan records"): representative turns on
 * a real server with the scripted agent, then every committed event of the
 * log read back as the store keeps it (its envelope and data as JSON). The
 * baseline is the same log without those two events, which is exactly what
 * the log held before they were emitted (nothing else changed with them).
 */

/** About 400 characters of a user's request, and an answer of about 1,500. */
const ASK = "Look at how the scheduler arms its timers after a restart, tell me whether a timer due while the server was down fires once, and if it does not, propose the smallest change that makes it so. Keep the existing tests passing and add one that restarts the server with a timer due. Mention every file you would touch and why, and say what could go wrong with the change in a deployment of several nodes.";
const ANSWER = Array.from({ length: 15 }, (_, i) => `Point ${i + 1}: the timer is re-armed from the log at start-up, and a due fire is taken once by its derived command id.`).join(" ");
const PLAN = { kind: "proposed_plan", title: "Fire due timers once after a restart", markdown: "1. Read the due timer\n2. Derive the fire's command id\n3. Test a restart with a timer due", steps: [{ text: "Read the due timer", status: "completed" }, { text: "Derive the fire's command id", status: "in_progress" }, { text: "Test a restart with a timer due", status: "pending" }] };

/** The turn shapes measured: a question and its answer, and one with a plan and a command between. */
const TURNS: readonly { readonly name: string; readonly steps: readonly Record<string, unknown>[] }[] = [
  { name: "message and answer", steps: [{ say: ANSWER }] },
  { name: "message, plan, command, answer", steps: [{ emit: PLAN }, { run: "echo checked" }, { say: ANSWER }] },
];

const ENTITY_EVENTS: ReadonlySet<string> = new Set(["message.updated", "plan.updated"]);

export async function runTranscriptEventsBench(options: { turns: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-transcript-"));
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const owner = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  try {
    const rows: string[][] = [["turn", "bytes / turn, without the records (baseline)", "with them", "ratio", "records / turn"]];
    for (const shape of TURNS) {
      const created = await owner.ok<{ threads: { threadId: string }[] }>("create_threads", { threads: [{ title: shape.name, target: { providerInstanceId: "scripted" } }] });
      const threadId = created.threads[0]!.threadId;
      for (let turn = 0; turn < options.turns; turn++) {
        // The scripted agent runs the script and takes the request after it as the message's prose.
        const message = `${JSON.stringify({ script: shape.steps })}\n\n${ASK}`;
        const sent = await owner.ok<{ runId: string }>("t3_thread_send", { threadId, message });
        const ended = await owner.ok<{ status: string }>("t3_thread_wait", { threadId, runId: sent.runId, timeoutMs: 60_000 });
        if (ended.status !== "completed") throw new Error(`a benchmark turn ended ${ended.status}`);
      }
      const events = await threadEvents(server, threadId);
      const bytes = (list: readonly StoredEvent[]) => list.reduce((sum, event) => sum + Buffer.byteLength(JSON.stringify(event)), 0);
      const all = bytes(events) / options.turns;
      const records = events.filter((event) => ENTITY_EVENTS.has(event.type));
      const baseline = all - bytes(records) / options.turns;
      rows.push([shape.name, baseline.toFixed(0), all.toFixed(0), (all / baseline).toFixed(3), (records.length / options.turns).toFixed(1)]);
    }
    printTable(`Message and plan records: event log bytes per turn (${options.turns} turns each, stored events as JSON)`, rows);
  } finally {
    await owner.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Every committed event of the thread's stream, read back by following the log from its start. */
async function threadEvents(server: Awaited<ReturnType<typeof startLoomServer>>, threadId: string): Promise<StoredEvent[]> {
  const through = server.orchestrator.state.lastSequence;
  const events: StoredEvent[] = [];
  await new Promise<void>((resolve) => {
    const subscription = server.orchestrator.follow(0, (event) => {
      if (event.streamId === threadId) events.push(event);
      if (event.sequence >= through) {
        subscription.close();
        resolve();
      }
    });
  });
  return events;
}
