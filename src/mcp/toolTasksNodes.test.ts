import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, childScript, launchParent } from "../testkit/delegationHarness.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { pollUntil } from "../testkit/poll.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";

/**
 * An MCP task on two in-process nodes sharing one PostgreSQL log
 * (docs/mcp.md, "Tasks"; docs/postgres.md): the task is the delegated task
 * of the shared log, so the node that did not create it answers tasks/get,
 * tasks/result and tasks/list for it, to the same credential and the owner.
 */

const database = usePostgresDatabase();
const nodes: LoomHarness[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  const schema = `mcp_tasks_nodes_${process.pid}`;
  for (let i = 0; i < 2; i++) {
    nodes.push(await LoomHarness.start({ config: { providers: DELEGATION_PROVIDERS, database: { url: database().url, schema }, nodes: { heartbeatMs: 200, leaseMs: 10_000 } } }));
  }
}, 120_000);

afterAll(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const node of nodes.splice(0)) await node.close();
});

async function sdkClient(node: LoomHarness, token: string): Promise<Client> {
  const client = new Client({ name: "loom-task-nodes-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(node.server.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

describe("MCP tasks across nodes", { timeout: 60_000 }, () => {
  it("answers on node B for a delegate_task task created on node A", async () => {
    const [a, b] = nodes as [LoomHarness, LoomHarness];
    const parent = await launchParent(a, [{ sleep: 120_000 }], "rigid");
    await a.waitForRun(parent.runId, "running", 30_000);
    const session = [...a.state.providerSessions.values()].find((candidate) => candidate.threadId === parent.threadId && candidate.releasedAt === null)!;
    const credential = await a.server.credentials.issue({
      environmentId: a.server.environmentId,
      threadId: parent.threadId,
      providerInstanceId: session.providerInstanceId,
      providerSessionId: session.id,
    });
    const onA = await sdkClient(a, credential.token);
    const created = await onA.request(
      { method: "tools/call", params: { name: "delegate_task", arguments: { task: childScript({ say: "made on A" }), target: { providerInstanceId: "b" } } } },
      CreateTaskResultSchema,
      { task: { ttl: 60_000 } },
    );
    const taskId = created.task.taskId;

    const onB = await sdkClient(b, credential.token);
    // Node B answers once it has folded A's commits: until then the id is unknown to it.
    const done = await pollUntil(
      () => onB.experimental.tasks.getTask(taskId).catch((error: unknown) => ({ status: `refused: ${String(error)}` })),
      (task) => task.status === "completed",
      `task ${taskId} completed, seen from B`,
      30_000,
    );
    expect(done).toMatchObject({ taskId, status: "completed", statusMessage: "made on A", createdAt: created.task.createdAt });
    const result = await onB.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ taskId, status: "completed", summary: "made on A" });
    const ownerOnB = await sdkClient(b, b.ownerToken);
    expect((await ownerOnB.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(taskId);
  });

  it("answers on node B for a t3_thread_wait task created on node A, and to no other credential", async () => {
    const [a, b] = nodes as [LoomHarness, LoomHarness];
    const thread = await launchParent(a, [{ say: "waited on A" }], "a", "Waited");
    const onA = await sdkClient(a, a.ownerToken);
    const created = await onA.request(
      { method: "tools/call", params: { name: "t3_thread_wait", arguments: { threadId: thread.threadId } } },
      CreateTaskResultSchema,
      { task: { ttl: 600_000 } },
    );
    const taskId = created.task.taskId;
    const onB = await sdkClient(b, b.ownerToken);
    const done = await pollUntil(
      () => onB.experimental.tasks.getTask(taskId).catch((error: unknown) => ({ status: `refused: ${String(error)}`, ttl: null })),
      (task) => task.status === "completed",
      `task ${taskId} completed, seen from B`,
      30_000,
    );
    expect(done.ttl).toBe(600_000);
    const result = await onB.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ threadId: thread.threadId, runId: thread.runId, status: "completed", result: "waited on A" });
    // The owner made it: a thread's credential on B does not see it.
    const session = [...b.state.providerSessions.values()].find((candidate) => candidate.threadId === thread.threadId)!;
    const credential = await b.server.credentials.issue({
      environmentId: b.server.environmentId,
      threadId: thread.threadId,
      providerInstanceId: session.providerInstanceId,
      providerSessionId: session.id,
    });
    const agentOnB = await sdkClient(b, credential.token);
    await expect(agentOnB.experimental.tasks.getTask(taskId)).rejects.toThrow(/task_not_found/);
  });
});
