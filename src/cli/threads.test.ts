import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomMcpClient } from "../client/loomMcpClient.js";
import { CLI_PATH, type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";

/**
 * `loom threads` against a real `loom serve` with the scripted provider. The
 * server caps waits at 1 s, so every wait longer than that has to repeat.
 */
const loom = runLoom;

/** `loom` running in the background, its output readable while it runs. */
function spawnLoom(args: readonly string[]) {
  const child = spawn(process.execPath, [CLI_PATH, ...args], { env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return { stdout: () => stdout, stderr: () => stderr, exit: waitForExit(child).then(({ code }) => ({ status: code })) };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let stateDir: string;
let projectRoot: string;
let serve: ServeProcess;

/** `loom threads <args> --state-dir <the test server's dir>` */
function threads(...args: string[]): Promise<Ran> {
  return loom(["threads", ...args, "--state-dir", stateDir]);
}

/** An MCP client of the test server as its owner, to set up what the CLI cannot. */
function ownerClient(): Promise<LoomMcpClient> {
  return LoomMcpClient.connect(`${serve.url}/mcp`, readFileSync(join(stateDir, "owner-token"), "utf8").trim());
}

function json<T = Record<string, unknown>>(ran: Ran): T {
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as T;
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-threads-"));
  projectRoot = mkdtempSync(join(tmpdir(), "loom-cli-project-"));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "demo", root: projectRoot }], waits: { maxWaitMs: 1_000 } }));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(projectRoot, { recursive: true, force: true });
});

describe("loom threads", () => {
  it("launch --wait --json prints the launch and its finished run as one JSON object, and list shows the thread", async () => {
    const launched = json<{ threadId: string; runId: string; status: string; result: string; waitTimedOut: boolean; providerInstanceId: string; title: string }>(
      await threads("launch", "--provider", "scripted", "--message", "hello", "--title", "Greeting", "--wait", "--json"),
    );
    expect(launched).toMatchObject({ status: "completed", result: "Echo: hello", waitTimedOut: false, providerInstanceId: "scripted", title: "Greeting" });
    expect(launched.runId).toMatch(/^run:/);

    const listed = json<{ threads: { threadId: string; status: string; title: string }[] }>(await threads("list", "--json"));
    expect(listed.threads).toContainEqual(expect.objectContaining({ threadId: launched.threadId, status: "completed", title: "Greeting" }));
    const text = await threads("list");
    expect(text.stdout).toMatch(new RegExp(`^${launched.threadId}\\s+completed\\s+scripted\\s+\\S+ \\S+\\s+Greeting$`, "m"));
    expect(text.stdout.split("\n")[0]).toMatch(/^THREAD\s+STATUS\s+PROVIDER\s+UPDATED\s+TITLE$/);

    const running = json<{ threads: { threadId: string }[] }>(await threads("list", "--status", "running", "--json"));
    expect(running.threads.map((t) => t.threadId)).not.toContain(launched.threadId);
    const otherProject = json<{ total: number }>(await threads("list", "--project", "elsewhere", "--json"));
    expect(otherProject.total).toBe(0);
    // $LOOM_STATE_DIR stands in for --state-dir.
    const viaEnv = await loom(["threads", "list", "--json"], { ...cliEnv(), LOOM_STATE_DIR: stateDir });
    expect(json<{ threads: { threadId: string }[] }>(viaEnv).threads.map((t) => t.threadId)).toContain(launched.threadId);
  });

  it("read prints the whole transcript, following the pages past the first", async () => {
    const script = { script: [1, 2, 3].map((n) => ({ say: `part-${n} ${"x".repeat(9_000)}` })) };
    const { threadId } = json<{ threadId: string; status: string }>(await threads("launch", "--message", JSON.stringify(script), "--title", "Long", "--wait", "--json"));

    // One read does not hold it all: the CLI has to follow nextPosition.
    const client = await ownerClient();
    const firstPage = await client.ok<{ hasMore: boolean; items: unknown[] }>("t3_thread_read", { threadId });
    await client.close();
    expect(firstPage.hasMore).toBe(true);

    const read = await threads("read", threadId);
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout.split("\n").slice(0, 2)).toEqual(["Long", `thread ${threadId} · completed · scripted (scripted-1) · project demo`]);
    for (const n of [1, 2, 3]) expect(read.stdout).toContain(`assistant:\n  part-${n} xxx`);
    const merged = json<{ items: { type: string }[]; hasMore: boolean }>(await threads("read", threadId, "--json"));
    expect(merged.items.map((i) => i.type)).toEqual(["user_message", "assistant_message", "assistant_message", "assistant_message"]);
    expect(merged.hasMore).toBe(false);
  });

  it("send starts a new run on a finished thread and wait returns its result; read shows both runs", async () => {
    const { threadId } = json<{ threadId: string }>(await threads("launch", "--message", "hello", "--wait", "--json"));
    const sent = json<{ threadId: string; runId: string; delivery: string }>(await threads("send", threadId, "again", "--json"));
    expect(sent).toMatchObject({ threadId, delivery: "started" });
    const waited = json<{ runId: string; status: string; result: string }>(await threads("wait", threadId, "--json"));
    expect(waited).toEqual(expect.objectContaining({ runId: sent.runId, status: "completed", result: "Echo: again" }));

    const text = await threads("send", threadId, "third");
    expect(text.stdout).toMatch(new RegExp(`^sent to ${threadId}: started \\(run run:\\S+, \\w+\\)$`, "m"));
    const waitedText = await threads("wait", threadId);
    expect(waitedText.stdout).toMatch(/^run run:\S+ completed\n\nEcho: third\n$/);

    const transcript = (await threads("read", threadId)).stdout;
    expect(transcript).toContain("── run #1 · completed ──\n\nuser:\n  hello\n\nassistant:\n  Echo: hello");
    expect(transcript).toContain("── run #3 · completed ──\n\nuser:\n  third\n\nassistant:\n  Echo: third");
  });

  it("wait repeats past the server's wait cap until the run ends, with progress on stderr only; --timeout stops early", async () => {
    const script = { script: [{ sleep: 120_000 }, { say: "never" }] };
    const { threadId, runId } = json<{ threadId: string; runId: string }>(await threads("launch", "--message", JSON.stringify(script), "--json"));

    // --timeout expiry still prints where the run stands, and exits 4.
    const earlyRan = await threads("wait", threadId, "--timeout", "200", "--json");
    expect(earlyRan.status).toBe(4);
    const early = JSON.parse(earlyRan.stdout) as { runId: string; status: string; waitTimedOut: boolean };
    expect(early).toMatchObject({ runId, waitTimedOut: true });
    expect(["starting", "running"]).toContain(early.status);

    // Several 1 s server waits pass and a progress line shows; the wait ends only when the run does.
    const waiting = spawnLoom(["threads", "wait", threadId, "--json", "--state-dir", stateDir]);
    await until(() => /^loom: waiting: run \S+ is running \(\d+\.\d s elapsed\)$/m.test(waiting.stderr()), 20_000);
    expect(waiting.stdout()).toBe("");
    const client = await ownerClient();
    await client.ok("t3_thread_interrupt", { threadId });
    await client.close();
    const done = await waiting.exit;
    expect(done.status, waiting.stderr()).toBe(0);
    expect(JSON.parse(waiting.stdout())).toMatchObject({ threadId, runId, status: "interrupted", waitTimedOut: false });
  });

  it("fails with code: message and exit 1 when a tool fails", async () => {
    const unknown = await threads("read", "thread:nope");
    expect(unknown).toEqual({ status: 1, stdout: "", stderr: "thread_not_found: thread thread:nope does not exist\n" });
    const waitUnknown = await threads("wait", "thread:nope", "--json");
    expect(waitUnknown.status).toBe(1);
    expect(waitUnknown.stderr).toMatch(/^thread_not_found: /);
    const badProvider = await threads("launch", "--provider", "nope", "--message", "hi");
    expect(badProvider.status).toBe(1);
    expect(badProvider.stderr).toMatch(/^provider_unavailable: no provider instance named nope; the instances are (\S+, )*scripted(, \S+)*\n$/);
  });

  it("exits 2 on usage errors, naming the problem", async () => {
    const cases: [string[], RegExp][] = [
      [["read"], /loom threads read takes ID, got none/],
      [["send", "thread:x"], /loom threads send takes ID and TEXT/],
      [["send", "thread:x", "hi", "--mode", "shout"], /--mode must be one of auto, queue, steer, restart/],
      [["list", "--limit", "0"], /--limit must be a whole number from 1 to 100/],
      [["list", "--status", "sleeping"], /--status must be one of idle, active/],
      [["launch", "--provider", "scripted"], /needs --message TEXT/],
      [["wait", "thread:x", "--timeout", "soon"], /--timeout must be a whole number/],
      [["list", "--bogus"], /Unknown option '--bogus'/],
      [["frobnicate"], /unknown threads command "frobnicate"/],
    ];
    const ran = await Promise.all(cases.map(([args]) => threads(...args)));
    cases.forEach(([args, message], i) => {
      expect({ args, status: ran[i]!.status }).toEqual({ args, status: 2 });
      expect(ran[i]!.stderr).toMatch(message);
      expect(ran[i]!.stdout).toBe("");
    });
    const help = await loom(["threads", "--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("loom threads wait ID [--run RUNID | --tree] [--timeout MS] [--json]");
    const mainHelp = await loom(["--help"]);
    expect(mainHelp.stdout).toContain("loom threads launch --message TEXT [--provider ID]");
  });

  it("exits 3 when no server runs for the state dir, or server.json names one that is gone", async () => {
    const empty = mkdtempSync(join(tmpdir(), "loom-cli-empty-"));
    try {
      const none = await loom(["threads", "list", "--state-dir", empty]);
      expect(none.status).toBe(3);
      expect(none.stderr).toBe(`loom: no Loom server is running for state dir ${empty}; start one with \`loom serve\`\n`);

      const port = await closedPort();
      const url = `http://127.0.0.1:${port}`;
      writeFileSync(join(empty, "server.json"), JSON.stringify({ url, mcpUrl: `${url}/mcp`, pid: process.pid, environmentId: "env:x", startedAt: "" }));
      writeFileSync(join(empty, "owner-token"), "t".repeat(43));
      const refused = await loom(["threads", "read", "thread:x", "--state-dir", empty]);
      expect(refused.status).toBe(3);
      expect(refused.stderr).toContain(`no Loom server is running for state dir ${empty}; start one with \`loom serve\` (${url} did not answer)`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

/** A port nothing listens on: bind one, then let it go. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
