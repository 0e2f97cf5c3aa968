import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";
import { ScheduleChangeStream } from "../testkit/scheduleChangeStream.js";

/**
 * Two in-process nodes on one PostgreSQL log (docs/postgres.md): the
 * scheduled task change stream of one node follows the committed log, so it
 * announces the tasks another node saves and deletes, with the sequences
 * those commits have in the shared log.
 */

const database = usePostgresDatabase();
const nodes: LoomHarness[] = [];

beforeAll(async () => {
  const schema = `schedule_changes_${process.pid}`;
  for (let i = 0; i < 2; i++) nodes.push(await LoomHarness.start({ config: { database: { url: database().url, schema }, nodes: { heartbeatMs: 200, leaseMs: 10_000 } } }));
}, 120_000);

afterAll(async () => {
  for (const node of nodes.splice(0)) await node.close();
});

const owner = (node: LoomHarness, method: string, path: string, body?: unknown) =>
  fetch(`${node.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${node.ownerToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** The sequences of a task's events in the shared log, read through a node's follower from the start. */
const taskEvents = async (node: LoomHarness, taskId: string): Promise<number[]> => {
  const sequences: number[] = [];
  const reading = node.server.orchestrator.follow(0, (event) => {
    if (event.type.startsWith("scheduled-task.") && (event.data as { task: { id: string } }).task.id === taskId) sequences.push(event.sequence);
  });
  await reading.caughtUp;
  reading.close();
  return sequences;
};

describe("the scheduled task change stream across nodes", { timeout: 60_000 }, () => {
  it("announces on node B a task node A saves and then deletes", async () => {
    const [a, b] = nodes as [LoomHarness, LoomHarness];
    const stream = await ScheduleChangeStream.open(b.server.url, b.ownerToken);
    try {
      const created = await owner(a, "POST", "/api/schedules", { title: "Made on A", prompt: "Say hello.", trigger: { type: "interval", everyMs: 3_600_000 } });
      expect(created.status).toBe(201);
      const taskId = ((await created.json()) as { scheduledTaskId: string }).scheduledTaskId;
      const [saved] = await stream.changed(1);
      expect(await taskEvents(a, taskId)).toEqual([saved]);
      expect(b.server.orchestrator.state.scheduledTasks.get(taskId)?.title).toBe("Made on A");

      expect((await owner(a, "DELETE", `/api/schedules/${encodeURIComponent(taskId)}`)).status).toBe(200);
      const [, deleted] = await stream.changed(2);
      expect(await taskEvents(a, taskId)).toEqual([saved, deleted]);
      expect(b.server.orchestrator.state.scheduledTasks.has(taskId)).toBe(false);
    } finally {
      stream.close();
    }
  });
});
