import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NodesReport } from "../api/nodeRoutes.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { formatNodes } from "./nodesCommand.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";

/**
 * `loom nodes` against a real `loom serve` (one node on SQLite): stdout and
 * exit codes, the `GET /api/nodes` route it reads, and the text layout of a
 * report with several nodes.
 */

let dir: string;
let stateDir: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom(args);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "loom-cli-nodes-"));
  stateDir = join(dir, "state");
  serve = await spawnServe(["--port", "0", "--state-dir", stateDir], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(dir, { recursive: true, force: true });
});

describe("loom nodes", () => {
  it("prints the one node of a SQLite server, live, with its heartbeat, sessions and leases", async () => {
    const ran = await loom("nodes", "--state-dir", stateDir);
    expect(ran.status, ran.stderr).toBe(0);
    const pid = serve.child.pid!;
    expect(ran.stdout).toMatch(
      new RegExp(
        `^1 node\\(s\\), lease 15000 ms\\nloom:${pid}:[0-9a-f-]{36} \\(this node\\)  live  heartbeat \\d+\\.\\ds ago  ${serve.url.replaceAll(".", "\\.")}  pid ${pid}@\\S+\\n  sessions: 0\\n  leases: 0\\n$`,
      ),
    );
  });

  it("--json prints the report GET /api/nodes answers", async () => {
    const ran = await loom("nodes", "--json", "--state-dir", stateDir);
    expect(ran.status, ran.stderr).toBe(0);
    const report = JSON.parse(ran.stdout) as NodesReport;
    expect(report.nodes).toEqual([expect.objectContaining({ nodeId: report.self, url: serve.url, pid: serve.child.pid, status: "live", takenOverBy: null, sessions: [], leases: [] })]);

    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    const fromRoute = (await (await fetch(`${serve.url}/api/nodes`, { headers: { authorization: `Bearer ${token}` } })).json()) as NodesReport;
    expect(fromRoute.self).toBe(report.self);
    expect((await fetch(`${serve.url}/api/nodes`)).status).toBe(401);
    expect((await fetch(`${serve.url}/api/nodes`, { method: "POST", headers: { authorization: `Bearer ${token}` } })).status).toBe(405);
  });

  it("exits 2 on a stray argument and 3 when no server runs for the state dir", async () => {
    const stray = await loom("nodes", "extra", "--state-dir", stateDir);
    expect(stray).toMatchObject({ status: 2, stdout: "" });
    expect(stray.stderr).toBe('loom: loom nodes takes no arguments, got "extra"\n');

    const empty = join(dir, "empty");
    const none = await loom("nodes", "--state-dir", empty);
    expect(none).toMatchObject({ status: 3, stdout: "" });
    expect(none.stderr).toMatch(/^loom: no Loom server is running for state dir .*empty/);
  });
});

describe("formatNodes", () => {
  it("shows each node's status, takeover, sessions and leases", () => {
    const report: NodesReport = {
      self: "loom:2:b",
      leaseMs: 1_500,
      nodes: [
        {
          nodeId: "loom:2:b",
          url: "http://127.0.0.1:7402",
          pid: 2,
          hostname: "host-b",
          startedAt: "2026-01-01T00:00:00.000Z",
          heartbeatAt: "2026-01-01T00:00:10.000Z",
          heartbeatAgeMs: 250,
          status: "live",
          takenOverBy: null,
          sessions: [{ threadId: "thread:t1", providerSessionId: "provider-session:s1" }],
          leases: [{ effectId: "effect:e1", kind: "provider.turn.start", threadId: "thread:t1", leaseExpiresAt: "2026-01-01T00:00:11.000Z" }],
        },
        {
          nodeId: "loom:1:a",
          url: "http://127.0.0.1:7401",
          pid: 1,
          hostname: "host-a",
          startedAt: "2026-01-01T00:00:00.000Z",
          heartbeatAt: "2026-01-01T00:00:01.000Z",
          heartbeatAgeMs: 9_050,
          status: "lost",
          takenOverBy: "loom:2:b",
          sessions: [],
          leases: [],
        },
      ],
    };
    expect(formatNodes(report)).toBe(
      [
        "2 node(s), lease 1500 ms",
        "loom:2:b (this node)  live  heartbeat 0.3s ago  http://127.0.0.1:7402  pid 2@host-b",
        "  sessions: 1",
        "    provider-session:s1 (thread thread:t1)",
        "  leases: 1",
        "    provider.turn.start effect:e1 (thread thread:t1)",
        "loom:1:a  lost, taken over by loom:2:b  heartbeat 9.1s ago  http://127.0.0.1:7401  pid 1@host-a",
        "  sessions: 0",
        "  leases: 0",
        "",
      ].join("\n"),
    );
  });
});
