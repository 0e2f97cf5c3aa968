import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodesReport } from "../api/nodeRoutes.js";
import { NODE_LOST_NOTICE } from "../engine/nodeTakeover.js";
import { script } from "../testkit/loomHarness.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { LoomMcpClient } from "../testkit/mcpClient.js";
import { pollUntil } from "../testkit/poll.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";
import { TcpProxy } from "../testkit/tcpProxy.js";

/**
 * A node that loses its lease stops itself instead of running on as a zombie
 * (docs/postgres.md "When a node dies"), and a database that cannot be
 * reached is a clear error: real `loom serve --database` processes on a
 * PostgreSQL test cluster, one of them suspended (SIGSTOP) past its lease or
 * cut off from the database through a TCP relay.
 */

const HEARTBEAT_MS = 200;
/** Long enough that a node starved on a loaded machine is not declared lost by mistake. */
const LEASE_MS = 5_000;
const database = usePostgresDatabase();

interface ReadResult {
  thread: { activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; text: string }[];
}

interface Node {
  readonly serve: ServeProcess;
  readonly client: LoomMcpClient;
  readonly token: string;
}

let dir: string;
let schema = "";
let schemaCount = 0;
const nodes: Node[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-node-loss-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const node of nodes.splice(0)) {
    await node.client.close().catch(() => undefined);
    if (node.serve.child.signalCode === "SIGSTOP" || node.serve.child.exitCode === null) node.serve.child.kill("SIGCONT");
    if (node.serve.child.exitCode === null && node.serve.child.signalCode === null) node.serve.child.kill("SIGTERM");
    await waitForExit(node.serve.child);
  }
});

function nextSchema(): void {
  schemaCount += 1;
  schema = `loss_${process.pid}_${schemaCount}`;
}

async function startNode(name: string, url = database().url): Promise<Node> {
  const stateDir = join(dir, `${schema}-${name}`);
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], database: { schema }, nodes: { heartbeatMs: HEARTBEAT_MS, leaseMs: LEASE_MS } }));
  const serve = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", url]);
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const client = await LoomMcpClient.connect(`${serve.url}/mcp`, token, `node-${name}`);
  const node = { serve, client, token };
  nodes.push(node);
  return node;
}

function read(node: Node, threadId: string, done: (result: ReadResult) => boolean, timeoutMs?: number): Promise<ReadResult> {
  return pollUntil(() => node.client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" }), done, `thread ${threadId} on ${node.serve.url}`, timeoutMs);
}

async function nodesReport(node: Node): Promise<NodesReport> {
  const response = await fetch(`${node.serve.url}/api/nodes`, { headers: { authorization: `Bearer ${node.token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as NodesReport;
}

/** A run that would say "never" after 30 s, started on `node` alone so that its agent runs there. */
async function launchLongRun(node: Node): Promise<{ threadId: string; runId: string; nodeId: string }> {
  const launched = await node.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Long", message: script({ sleep: 30_000 }, { say: "never" }) });
  const report = await pollUntil(() => nodesReport(node), (r) => r.nodes.some((n) => n.sessions.some((s) => s.threadId === launched.threadId)), "the run's session");
  expect(report.nodes).toHaveLength(1);
  return { ...launched, nodeId: report.self };
}

/** After the takeover: the run ended node_lost once, its agent never spoke, nothing was written twice. */
async function expectTakenOver(survivor: Node, run: { threadId: string; runId: string }): Promise<void> {
  const ended = await read(survivor, run.threadId, (r) => r.runs[0]?.status === "interrupted", LEASE_MS + 10_000);
  expect(ended.runs[0]).toMatchObject({ runId: run.runId, status: "interrupted", endReason: "node_lost" });
  expect(ended.items.filter((item) => item.type === "system_notice" && item.text === NODE_LOST_NOTICE)).toHaveLength(1);
  expect(ended.items.some((item) => item.text === "never")).toBe(false);
}

describe("a node that loses its lease", { timeout: 120_000 }, () => {
  it("stops itself when it finds another node declared it lost (suspended past the lease)", async () => {
    nextSchema();
    const zombie = await startNode("a");
    const run = await launchLongRun(zombie);
    const survivor = await startNode("b");

    zombie.serve.child.kill("SIGSTOP");
    const report = await pollUntil(() => nodesReport(survivor), (r) => {
        // The report may show the node lost before its sessions and leases are gone: wait for both.
        const lost = r.nodes.find((n) => n.nodeId === run.nodeId);
        return lost?.status === "lost" && lost.sessions.length === 0 && lost.leases.length === 0;
      },
      "the suspended node declared lost and its sessions cleared",
      LEASE_MS + 10_000,
    );
    expect(report.nodes.find((n) => n.nodeId === run.nodeId)).toMatchObject({ takenOverBy: report.self, sessions: [], leases: [] });
    await expectTakenOver(survivor, run);

    zombie.serve.child.kill("SIGCONT");
    const exit = await waitForExit(zombie.serve.child);
    expect(exit.code).toBe(1);
    expect(zombie.serve.stderr()).toContain(`loom: node ${run.nodeId} was declared lost by node ${report.self}, which ended its runs; it stops instead of carrying on`);

    // The thread carries on from the survivor, and the zombie wrote nothing after it came back.
    const sent = await survivor.client.ok<{ runId: string }>("t3_thread_send", { threadId: run.threadId, message: "after the takeover" });
    expect(await survivor.client.ok("t3_thread_wait", { threadId: run.threadId, runId: sent.runId, timeoutMs: 10_000 })).toMatchObject({ status: "completed", result: "Echo: after the takeover" });
    const final = await read(survivor, run.threadId, (r) => r.thread.activeRunId === null);
    expect(final.runs.map((r) => [r.runId, r.status, r.endReason])).toEqual([
      [run.runId, "interrupted", "node_lost"],
      [sent.runId, "completed", "completed"],
    ]);
    expect(final.items.filter((item) => item.type === "system_notice" && item.text === NODE_LOST_NOTICE)).toHaveLength(1);
    expect(final.items.some((item) => item.text === "never")).toBe(false);
  });

  it("stops itself with a clear error when the database stays unreachable for the lease, and another node takes over", async () => {
    nextSchema();
    const proxy = await TcpProxy.start(database().url);
    const cutOff = await startNode("a", proxy.url(database().url));
    const run = await launchLongRun(cutOff);
    const survivor = await startNode("b");

    await proxy.cut();
    const exit = await waitForExit(cutOff.serve.child);
    expect(exit.code).toBe(1);
    expect(cutOff.serve.stderr()).toMatch(new RegExp(`loom: node ${run.nodeId} could not reach the database for \\d+ ms \\(lease ${LEASE_MS} ms\\): .+; it stops so that another node takes its work over`));

    await expectTakenOver(survivor, run);
    const report = await nodesReport(survivor);
    expect(report.nodes.find((n) => n.nodeId === run.nodeId)).toMatchObject({ status: "lost", takenOverBy: report.self });
  });
});

describe("an unreachable database at start", { timeout: 60_000 }, () => {
  it("stops `loom serve` with a typed, clear error and never prints the password", async () => {
    nextSchema();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const stateDir = join(dir, `${schema}-unreachable`);
    mkdirSync(stateDir);

    const failure = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", `postgres://loom:hunter2@127.0.0.1:${port}/loom`]).then(
      () => null,
      (error: unknown) => String(error),
    );
    expect(failure).toMatch(new RegExp(`exited early \\(1\\).*loom: cannot open the PostgreSQL database postgres://loom:\\*\\*\\*@127\\.0\\.0\\.1:${port}/loom \\(schema public\\): .*ECONNREFUSED`, "s"));
    expect(failure).not.toContain("hunter2");
  });

  it("names a refused login the same way", async () => {
    nextSchema();
    const stateDir = join(dir, `${schema}-refused`);
    mkdirSync(stateDir);
    const wrong = new URL(database().url);
    wrong.password = "not-the-password";
    const failure = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", wrong.toString()]).then(
      () => null,
      (error: unknown) => String(error),
    );
    expect(failure).toMatch(/exited early \(1\).*loom: cannot open the PostgreSQL database postgres:\/\/loom:\*\*\*@.*: password authentication failed/s);
    expect(failure).not.toContain("not-the-password");
  });
});
