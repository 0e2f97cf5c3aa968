import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LoomServer, startLoomServer } from "./loomServer.js";

let stateDir: string;
let server: LoomServer | null = null;

beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-server-"));
});
afterEach(async () => {
  await server?.close();
  server = null;
  rmSync(stateDir, { recursive: true, force: true });
});

async function start(): Promise<LoomServer> {
  server = await startLoomServer({ stateDir, port: 0 });
  return server;
}

function ownerToken(): string {
  return readFileSync(join(stateDir, "owner-token"), "utf8").trim();
}

async function call(s: LoomServer, method: string, path: string, body?: string, token: string | null = ownerToken()) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${s.url}${path}`, { method, headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const create = (threadId: string, title = "hello") =>
  JSON.stringify({ type: "thread.create", commandId: `cmd:${threadId}`, data: { threadId, projectId: "p", title } });

describe("loom server", () => {
  it("listens on 127.0.0.1 and answers /health without a token", async () => {
    const s = await start();
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(s, "GET", "/health", undefined, null);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, environmentId: s.environmentId });
    expect(typeof res.body.version).toBe("string");
  });

  it("writes server.json and a 0600 owner token that is reused on restart", async () => {
    const s = await start();
    const info = JSON.parse(readFileSync(join(stateDir, "server.json"), "utf8")) as Record<string, unknown>;
    expect(info).toMatchObject({ url: s.url, mcpUrl: `${s.url}/mcp`, pid: process.pid, environmentId: s.environmentId });
    expect(Number.isNaN(Date.parse(info.startedAt as string))).toBe(false);
    expect(statSync(join(stateDir, "owner-token")).mode & 0o777).toBe(0o600);
    const token = ownerToken();
    const environmentId = s.environmentId;
    await s.close();
    const again = await start();
    expect(ownerToken()).toBe(token);
    expect(again.environmentId).toBe(environmentId);
  });

  it("rejects API calls without the owner token", async () => {
    const s = await start();
    for (const token of [null, "wrong-token"]) {
      const res = await call(s, "GET", "/api/orchestration/shell-snapshot", undefined, token);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  it("dispatches a command and serves both snapshots", async () => {
    const s = await start();
    const receipt = await call(s, "POST", "/api/orchestration/dispatch", create("thread:a"));
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({ status: "accepted", commandId: "cmd:thread:a", eventCount: 1 });
    const shell = await call(s, "GET", "/api/orchestration/shell-snapshot");
    expect(shell.body.snapshotSequence).toBe(receipt.body.sequence);
    expect((shell.body.threads as { id: string }[]).map((t) => t.id)).toEqual(["thread:a"]);
    const detail = await call(s, "GET", `/api/orchestration/threads/${encodeURIComponent("thread:a")}/snapshot`);
    expect(detail.status).toBe(200);
    expect(detail.body.thread).toMatchObject({ id: "thread:a", title: "hello", projectId: "p" });
    const missing = await call(s, "GET", "/api/orchestration/threads/thread%3Anope/snapshot");
    expect(missing.status).toBe(404);
  });

  it("answers a thread.create without a threadId with the id it created, also on a retry", async () => {
    const s = await start();
    const body = JSON.stringify({ type: "thread.create", commandId: "cmd:no-id", data: { projectId: "p", title: "picked by the server" } });
    const first = await call(s, "POST", "/api/orchestration/dispatch", body);
    expect(first.status).toBe(200);
    const created = first.body.created as { threadIds: string[]; runIds: string[] };
    expect(created.runIds).toEqual([]);
    expect(created.threadIds).toHaveLength(1);
    expect(s.orchestrator.state.threads.get(created.threadIds[0]!)?.title).toBe("picked by the server");
    const again = await call(s, "POST", "/api/orchestration/dispatch", body);
    expect(again.body).toEqual(first.body);
  });

  it("refuses a message to a thread without a provider instance and says how to set one", async () => {
    const s = await start();
    await call(s, "POST", "/api/orchestration/dispatch", create("thread:bare"));
    const sent = await call(s, "POST", "/api/orchestration/dispatch", JSON.stringify({ type: "message.dispatch", commandId: "cmd:say", data: { threadId: "thread:bare", text: "hi" } }));
    expect(sent.status).toBe(409);
    expect(sent.body).toMatchObject({ status: "rejected", rejection: { code: "provider_not_set" } });
    const message = (sent.body.rejection as { message: string }).message;
    expect(message).toContain("thread.model-selection.set (data: { threadId, modelSelection: { providerInstanceId, model } })");
    expect(message).toContain("loom providers");
  });

  it("returns the stored receipt for a repeated commandId and a typed rejection for a bad command", async () => {
    const s = await start();
    const first = await call(s, "POST", "/api/orchestration/dispatch", create("thread:a"));
    const again = await call(s, "POST", "/api/orchestration/dispatch", create("thread:a", "other title"));
    expect(again.body).toEqual(first.body);
    const archiveMissing = JSON.stringify({ type: "thread.archive", commandId: "cmd:x", data: { threadId: "thread:none" } });
    const rejected = await call(s, "POST", "/api/orchestration/dispatch", archiveMissing);
    expect(rejected.status).toBe(409);
    expect(rejected.body).toMatchObject({ status: "rejected", rejection: { code: "thread_not_found" } });
    const retried = await call(s, "POST", "/api/orchestration/dispatch", archiveMissing);
    expect(retried.body).toEqual(rejected.body);
  });

  it("answers bad input with a 400 and writes nothing", async () => {
    const s = await start();
    const before = s.orchestrator.state.lastSequence;
    const cases: [string, string][] = [
      ["{not json", "invalid_json"],
      ["", "invalid_json"],
      ["[1,2]", "invalid_command"],
      [JSON.stringify({ type: "thread.explode", commandId: "c", data: {} }), "unknown_command_type"],
      [JSON.stringify({ type: "thread.create", commandId: "c", data: { projectId: 5 } }), "invalid_command"],
      [JSON.stringify({ type: "thread.create", commandId: "c", data: { projectId: "p", runtimeMode: "root" } }), "invalid_command"],
      [JSON.stringify({ type: "thread.guest-share.open", commandId: "c", data: {} }), "internal_command"],
      [JSON.stringify({ type: "thread.guest-share.close", commandId: "c", data: {} }), "invalid_command"],
    ];
    for (const [body, code] of cases) {
      const res = await call(s, "POST", "/api/orchestration/dispatch", body);
      expect(res.status, body).toBe(400);
      expect(res.body.error, body).toMatchObject({ code: "invalid_request", retryable: false, details: { reason: code } });
    }
    expect(s.orchestrator.state.lastSequence).toBe(before);
    expect(s.orchestrator.state.threads.size).toBe(0);
    // An unknown type names the ones a client may send, and only those.
    const unknown = await call(s, "POST", "/api/orchestration/dispatch", JSON.stringify({ type: "thread.explode", commandId: "c", data: {} }));
    const message = (unknown.body.error as { message: string }).message;
    expect(message).toMatch(/^unknown command type "thread\.explode"; valid types: /);
    expect(message).toContain("message.dispatch, ");
    expect(message).toContain("thread.create, ");
    expect(message).not.toContain("thread.guest-share.open");
  });

  it("keeps every thread across a restart on the same state dir", async () => {
    const s = await start();
    for (const id of ["thread:1", "thread:2", "thread:3"]) {
      await call(s, "POST", "/api/orchestration/dispatch", create(id));
    }
    await call(s, "POST", "/api/orchestration/dispatch", JSON.stringify({ type: "thread.archive", commandId: "cmd:arch", data: { threadId: "thread:2" } }));
    const before = await call(s, "GET", "/api/orchestration/shell-snapshot?includeArchived=1");
    await s.close();
    const again = await start();
    const after = await call(again, "GET", "/api/orchestration/shell-snapshot?includeArchived=1");
    expect(after.body).toEqual(before.body);
    expect((after.body.threads as unknown[]).length).toBe(3);
    const active = await call(again, "GET", "/api/orchestration/shell-snapshot");
    expect((active.body.threads as { id: string }[]).map((t) => t.id).sort()).toEqual(["thread:1", "thread:3"]);
  });
});

describe("config checked at start", () => {
  it("refuses an unknown driver and a bad driver option, listing every problem, and leaves no server behind", async () => {
    const configPath = join(stateDir, "config.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        providers: [
          { id: "typo", driver: "codx" },
          { id: "slow", driver: "scripted", options: { turnDelayMs: -5, colour: "blue" } },
          { id: "fine", driver: "scripted" },
        ],
      }),
    );
    const failure = await startLoomServer({ stateDir, port: 0, configPath }).then(
      () => null,
      (error: unknown) => error as Error & { code?: string },
    );
    expect(failure?.code).toBe("invalid_config");
    expect(failure?.message).toContain('providers.typo: unknown driver "codx"; known drivers: acp, claude, codex, cursor, grok, opencode, pi, scripted');
    expect(failure?.message).toContain("providers.slow: options.turnDelayMs");
    expect(failure?.message).toContain('providers.slow: options: Unrecognized key: "colour"');
    expect(failure?.message).toMatch(/\(3 problems\)/);
    expect(existsSync(join(stateDir, "server.json"))).toBe(false);
  });
});
