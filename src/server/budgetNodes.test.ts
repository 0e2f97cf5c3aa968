import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ThreadListOutput, ThreadReadOutput } from "../contracts/tools/threadTools.js";
import { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import { PostgresCredentialStore } from "../store/credentials/postgresCredentialStore.js";
import { childScript } from "../testkit/delegationHarness.js";
import { script } from "../testkit/loomHarness.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { LoomMcpClient } from "../testkit/mcpClient.js";
import { pollUntil } from "../testkit/poll.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";

/**
 * A root budget under delegations decided on two nodes at once
 * (docs/budgets.md, Reservations; docs/postgres.md, Several nodes): two real
 * `loom serve --database` processes on one PostgreSQL test cluster, a root
 * with a spawns (or turns) budget and eight sibling threads parked at a gate,
 * and sixteen delegate_task calls made as those siblings (each sibling once
 * through each node) all at once. Each node decides under the log's advisory
 * lock after folding the other's commits, so exactly what was left of the
 * limit is spawned, in the log and in both nodes' budget views; every other
 * call gets the typed budget_exceeded, and nothing is stopped on budget.
 */

const database = usePostgresDatabase();
const SIBLINGS = 8;
const LEFT = 4;

interface Node {
  readonly name: string;
  readonly serve: ServeProcess;
  readonly client: LoomMcpClient;
}

const schema = `budget_nodes_${process.pid}`;
let dir: string;
let pool: pg.Pool;
const nodes: Node[] = [];
const clients: LoomMcpClient[] = [];

// Two nodes on a fresh schema of the test database, started one after the other (the first migrates it).
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "loom-budget-nodes-"));
  for (const name of ["a", "b"]) {
    const stateDir = join(dir, name);
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], database: { schema }, nodes: { heartbeatMs: 200, leaseMs: 10_000 } }));
    const serve = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", database().url]);
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    nodes.push({ name, serve, client: await LoomMcpClient.connect(`${serve.url}/mcp`, token, `owner-${name}`) });
  }
  pool = new pg.Pool({ connectionString: database().url, options: `-c search_path=${schema}` });
}, 120_000);
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
});
afterAll(async () => {
  await pool?.end();
  for (const node of nodes.splice(0)) {
    await node.client.close().catch(() => undefined);
    if (node.serve.child.exitCode === null && node.serve.child.signalCode === null) node.serve.child.kill("SIGTERM");
    await waitForExit(node.serve.child);
  }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** The live credential scope of each sibling's agent session, as the node running it stored it. */
async function sessionScopes(threadIds: readonly string[]) {
  const rows = await pool.query<{ thread_id: string; scope: { environmentId: string; providerInstanceId: string; providerSessionId: string } }>(
    "SELECT thread_id, scope FROM loom_credentials WHERE kind = 'thread' AND ended IS NULL AND thread_id = ANY($1)",
    [threadIds],
  );
  return new Map(rows.rows.map((row) => [row.thread_id, row.scope]));
}

/** Every task the log records under `parentThreadIds` (subagent.updated events), by task id. */
async function loggedTasks(parentThreadIds: readonly string[]): Promise<string[]> {
  const rows = await pool.query<{ task_id: string }>(
    "SELECT DISTINCT data->'task'->>'taskId' AS task_id FROM events WHERE type = 'subagent.updated' AND data->'task'->>'parentThreadId' = ANY($1)",
    [parentThreadIds],
  );
  return rows.rows.map((row) => row.task_id).sort();
}

/** How many task results the siblings' turns took as steered notices (the scripted agent answers a steer at once). */
async function steeredResults(siblingIds: readonly string[]): Promise<number> {
  const rows = await pool.query<{ count: string }>(
    "SELECT count(*) FROM events WHERE type = 'turn-item.updated' AND data->'item'->>'type' = 'assistant_message' AND data->'item'->>'threadId' = ANY($1) AND data->'item'->>'text' LIKE 'Steered: Delegated task %'",
    [siblingIds],
  );
  return Number(rows.rows[0]?.count ?? 0);
}

/** The runs of the log that ended other than completed, and why: what a failed wait reports. */
async function runsThatEndedEarly(): Promise<string> {
  const rows = await pool.query<{ run: { threadId: string; id: string; status: string; endReason: string | null; failure: unknown } }>(
    "SELECT data->'run' AS run FROM events WHERE type = 'run.updated' AND data->'run'->>'status' IN ('interrupted', 'failed', 'cancelled') ORDER BY sequence",
  );
  return `runs that did not complete: ${JSON.stringify(rows.rows.map(({ run }) => [run.threadId, run.id, run.status, run.endReason, run.failure]))}`;
}

const readBudget = async (node: Node, threadId: string) => (await node.client.ok<ThreadReadOutput>("t3_thread_read", { threadId })).budget!;

/**
 * The gate, the root and its eight siblings parked at the gate; then sixteen
 * delegations as the siblings through both nodes at once. The grandchildren's
 * results reach their parked siblings as notices steered into the waiting
 * turns before the gate opens (so no notice starts a turn); through the gate
 * a sibling waits for its grandchildren, and the root for its siblings.
 */
async function delegateThroughBothNodes(kind: "spawns" | "turns", held: number) {
  const [a, b] = nodes as [Node, Node];
  const limit = held + LEFT;
  const gate = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: `Gate ${kind}`, message: script({ ask: "open the gate?" }, { say: "open" }) });
  const question = await pollUntil(
    () => a.client.ok<{ requests: { requestId: string }[] }>("t3_pending_request_list", { threadId: gate.threadId }),
    (list) => list.requests.length === 1,
    "the gate's question",
  );
  const sibling = childScript(
    { call: "t3_thread_wait", args: { threadId: gate.threadId, runId: gate.runId, timeoutMs: 60_000 } },
    { call: "t3_background_wait", args: { timeoutMs: 60_000 } },
    { say: "sibling done" },
  );
  const delegations = Array.from({ length: SIBLINGS }, (_, i) => ({ call: "delegate_task", args: { task: sibling, title: `Sibling ${kind} ${i}`, mode: "async" } }));
  const root = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
    title: `Budgeted root ${kind}`,
    message: script(...delegations, { call: "t3_background_wait", args: { timeoutMs: 60_000 } }, { say: "settled" }),
    budget: { [kind]: limit },
  });
  const parked = await pollUntil(
    () => b.client.ok<ThreadListOutput>("t3_thread_list", { includeSubagents: true, title: `Sibling ${kind}`, limit: 25 }),
    (list) => list.threads.filter((thread) => thread.parentThreadId === root.threadId && thread.blockedOnThreadWait).length === SIBLINGS,
    "eight siblings parked at the gate, seen from B",
    30_000,
  );
  const siblingIds = parked.threads.filter((thread) => thread.parentThreadId === root.threadId).map((thread) => thread.threadId);
  expect(await readBudget(b, root.threadId)).toMatchObject({ spent: { [kind]: held }, remaining: { [kind]: LEFT }, exceeded: null });

  // Each sibling's own agent session, reached through both nodes: a token is accepted on every node.
  const scopes = await sessionScopes(siblingIds);
  expect([...scopes.keys()].sort()).toEqual([...siblingIds].sort());
  const registry = new StoredCredentialRegistry({ store: new PostgresCredentialStore(pool), environmentId: scopes.get(siblingIds[0]!)!.environmentId, nodeId: "test" });
  const callers: { node: Node; client: LoomMcpClient }[] = [];
  for (const threadId of siblingIds) {
    const { environmentId, providerInstanceId, providerSessionId } = scopes.get(threadId)!;
    const issued = await registry.issue({ environmentId, threadId, providerInstanceId, providerSessionId });
    for (const node of [a, b]) {
      const client = await LoomMcpClient.connect(`${node.serve.url}/mcp`, issued.token, `sibling-via-${node.name}`);
      clients.push(client);
      callers.push({ node, client });
    }
  }

  // All sixteen at once.
  const outcomes = await Promise.all(
    callers.map(({ node, client }, i) => client.call("delegate_task", { task: childScript({ say: "grandchild done" }), title: `Grandchild ${i} via ${node.name}`, mode: "async" })),
  );
  const accepted = outcomes.filter((outcome) => !outcome.isError);
  const refused = outcomes.filter((outcome) => outcome.isError);
  expect(accepted).toHaveLength(LEFT);
  expect(refused).toHaveLength(2 * SIBLINGS - LEFT);
  for (const outcome of refused) {
    expect(outcome).toMatchObject({ errorCode: "budget_exceeded", errorMessage: expect.stringContaining(`the ${kind} budget of thread ${root.threadId} ran out (${limit} of ${limit})`) });
  }
  // The shared log holds exactly the accepted grandchildren, whichever node decided them.
  expect(await loggedTasks(siblingIds)).toEqual(accepted.map((outcome) => outcome.structured.taskId as string).sort());
  for (const node of [a, b]) {
    const budget = await pollUntil(() => readBudget(node, root.threadId), (view) => view.spent[kind] >= limit, `the root's spend on ${node.name}`);
    expect(budget).toMatchObject({ limits: { [kind]: limit }, spent: { [kind]: limit }, remaining: { [kind]: 0 }, reached: [kind], exceeded: null });
  }

  // Each grandchild's result has reached its parked sibling: its notice was steered into the sibling's waiting turn, which
  // took it. A steer still on its way when the sibling's turn ends would be sent again as a follow-up turn, past the budget.
  await pollUntil(() => steeredResults(siblingIds), (count) => count === LEFT, "every grandchild's result steered into its sibling's turn");

  // Open the gate: the tree finishes, and nothing was stopped on budget.
  await b.client.ok("t3_pending_request_respond", { threadId: gate.threadId, requestId: question.requests[0]!.requestId, answer: "yes" });
  const settled = await b.client.ok<{ status: string }>("t3_thread_wait", { threadId: root.threadId, runId: root.runId, timeoutMs: 30_000 });
  expect(settled, settled.status === "completed" ? undefined : await runsThatEndedEarly()).toMatchObject({ status: "completed", result: "settled" });
  expect(await loggedTasks(siblingIds)).toHaveLength(LEFT);
  for (const node of [a, b]) expect(await readBudget(node, root.threadId)).toMatchObject({ spent: { [kind]: limit }, exceeded: null });
}

describe("a root budget across two nodes", { timeout: 120_000 }, () => {
  it(`16 delegations by 8 siblings through both nodes at once under spawns ${SIBLINGS + LEFT}: exactly ${LEFT} are spawned`, async () => {
    // The eight siblings are spawns of the root's tree already.
    await delegateThroughBothNodes("spawns", SIBLINGS);
  });

  it(`16 delegations by 8 siblings through both nodes at once under turns ${1 + SIBLINGS + LEFT}: exactly ${LEFT} grandchild turns start`, async () => {
    // The root's turn and the siblings' hold 1 + 8 turns already.
    await delegateThroughBothNodes("turns", 1 + SIBLINGS);
  });
});
