import { afterEach, describe, expect, it } from "vitest";
import { EffectKind } from "../contracts/effects.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { LoomMcpClient } from "../testkit/mcpClient.js";
import { PostgresEventStore } from "../store/postgres/postgresEventStore.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";

/**
 * Two in-process nodes on one PostgreSQL log race for the effects of new
 * threads, whose agents have no session or credential yet, so no node holds
 * them (docs/postgres.md "Who runs what"): each effect is claimed once, each
 * thread gets one session and one credential, minted by the node that won,
 * and that credential is accepted by the other node too.
 */

const THREADS = 12;
const database = usePostgresDatabase();
const harnesses: LoomHarness[] = [];
let schemaCount = 0;

afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

interface Minted {
  readonly nodeId: string;
  readonly threadId: string;
  readonly token: string;
}

/** A node whose credential registry reports every token it mints (a spy on the real registry). */
async function startNode(schema: string, minted: Minted[]): Promise<LoomHarness> {
  const harness = await LoomHarness.start({ config: { database: { url: database().url, schema }, nodes: { heartbeatMs: 200, leaseMs: 10_000 } } });
  harnesses.push(harness);
  const { credentials, nodeId } = harness.server;
  const issue = credentials.issue.bind(credentials);
  credentials.issue = async (input) => {
    const issued = await issue(input);
    minted.push({ nodeId, threadId: input.threadId, token: issued.token });
    return issued;
  };
  return harness;
}

describe("two nodes racing for a new thread's effects", { timeout: 120_000 }, () => {
  it("claims each effect once, mints one credential per thread, and that credential works on both nodes", async () => {
    schemaCount += 1;
    const schema = `race_${process.pid}_${schemaCount}`;
    const minted: Minted[] = [];
    const a = await startNode(schema, minted);
    const b = await startNode(schema, minted);

    // Launched on both nodes at once: both workers are woken and claim from the same outbox.
    const launched = await Promise.all(
      Array.from({ length: THREADS }, (_, i) => ((i % 2 === 0 ? a : b).launch({ title: `Race ${i}`, message: script({ say: `hello ${i}` }) }) as Promise<{ threadId: string; runId: string }>)),
    );
    for (const { runId } of launched) {
      await a.waitForEnd(runId, 30_000);
      await b.waitForEnd(runId, 30_000);
    }

    for (const harness of [a, b]) {
      const state = harness.state;
      for (const [i, { threadId, runId }] of launched.entries()) {
        expect(harness.run(runId)).toMatchObject({ status: "completed" });
        expect(harness.assistantTexts(threadId, runId)).toEqual([`hello ${i}`]);
        // One attempt, on one provider session, per run: nothing was started twice.
        expect(state.runAttempts.get(runId)).toHaveLength(1);
        expect([...state.providerSessions.values()].filter((session) => session.threadId === threadId)).toHaveLength(1);
      }
    }
    const log = await PostgresEventStore.open(database().url, { schema });
    try {
      const starts = (await log.listOutbox("done")).filter((row) => row.kind === EffectKind.startTurn);
      expect(starts).toHaveLength(THREADS);
      expect(starts.every((row) => row.attempts === 1)).toBe(true);
      expect(await log.listOutbox("failed")).toEqual([]);
    } finally {
      await log.close();
    }

    // One credential per thread, minted by whichever node claimed its first effect.
    expect(minted.map((m) => m.threadId).sort()).toEqual(launched.map((l) => l.threadId).sort());
    const nodeIds = new Map([
      [a.server.nodeId, a],
      [b.server.nodeId, b],
    ]);
    for (const { nodeId, threadId, token } of minted) {
      const other = nodeId === a.server.nodeId ? b : a;
      expect(nodeIds.has(nodeId)).toBe(true);
      const client = await LoomMcpClient.connect(other.server.mcpUrl, token, "agent-elsewhere");
      try {
        const read = await client.ok<{ runs: { runId: string; status: string }[] }>("t3_thread_read", { threadId, view: "activity" });
        expect(read.runs).toEqual([expect.objectContaining({ runId: launched.find((l) => l.threadId === threadId)!.runId, status: "completed" })]);
      } finally {
        await client.close();
      }
    }
  });
});
