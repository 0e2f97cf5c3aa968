import { afterEach, describe, expect, it, vi } from "vitest";
import type { IssuedCredential } from "../../mcp/credentialRegistry.js";
import { LoomMcpClient } from "../../testkit/mcpClient.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/** Authentication of Loom's MCP endpoint against the real server (spec 000, Transport And Authentication). */

let harness: LoomHarness | null = null;
afterEach(async () => {
  vi.restoreAllMocks();
  await harness?.close();
  harness = null;
});

async function start(config?: Parameters<typeof LoomHarness.start>[0]): Promise<LoomHarness> {
  harness = await LoomHarness.start(config);
  return harness;
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** A raw Streamable HTTP initialize POST, with the given bearer token or none. */
async function rawInitialize(h: LoomHarness, token: string | null): Promise<{ status: number; challenge: string | null; message: string }> {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(h.server.mcpUrl, { method: "POST", headers, body: JSON.stringify(INITIALIZE) });
  const text = await res.text();
  // A success answers on an SSE stream; a refusal is a JSON error body.
  const message = res.status === 401 ? ((JSON.parse(text) as { error?: { message?: string } }).error?.message ?? "") : text;
  return { status: res.status, challenge: res.headers.get("www-authenticate"), message };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("MCP authentication", () => {
  it("answers 401 with a Bearer challenge without a token or with a wrong one, and the SDK client cannot connect", async () => {
    const h = await start();
    const missing = await rawInitialize(h, null);
    expect(missing.status).toBe(401);
    expect(missing.challenge).toBe("Bearer");
    const wrong = await rawInitialize(h, "not-a-loom-token");
    expect(wrong.status).toBe(401);
    expect(wrong.challenge).toMatch(/^Bearer error="invalid_token"/);
    expect(wrong.message).toBe("unknown bearer token");
    await expect(LoomMcpClient.connect(h.server.mcpUrl, "not-a-loom-token")).rejects.toThrow();
    // The owner token works on the same endpoint.
    const ok = await rawInitialize(h, h.ownerToken);
    expect(ok.status).toBe(200);
    expect(ok.message).toContain('"serverInfo"');
  });

  it("refuses a credential once it has been idle longer than the idle TTL", async () => {
    const h = await start({ config: { credentials: { idleTtlMs: 300 } } });
    const { threadId } = await h.createThread({ title: "Idle target" });
    const credential = await h.server.credentials.issue({
      environmentId: h.server.environmentId,
      threadId,
      providerInstanceId: "scripted",
      providerSessionId: "provider-session:test-idle",
    });
    const client = await h.connect(credential.token);
    const listed = await client.ok<{ projectId: string; total: number }>("t3_thread_list");
    expect(listed).toMatchObject({ projectId: "default", total: 1 });

    await sleep(450);
    await expect(client.call("t3_thread_list")).rejects.toThrow();
    const raw = await rawInitialize(h, credential.token);
    expect(raw.status).toBe(401);
    expect(raw.message).toBe("bearer token expired");
    expect(await h.server.credentials.resolve(credential.token)).toEqual({ ok: false, reason: "expired" });
    // The owner token has no idle expiry.
    expect((await h.owner.ok<{ total: number }>("t3_thread_list")).total).toBe(1);
  });

  it("revokes the agent's session credential when its provider session is released", async () => {
    const h = await start();
    const issued: { threadId: string; credential: IssuedCredential }[] = [];
    const issue = h.server.credentials.issue.bind(h.server.credentials);
    vi.spyOn(h.server.credentials, "issue").mockImplementation(async (scope, options) => {
      const credential = await issue(scope, options);
      issued.push({ threadId: scope.threadId, credential });
      return credential;
    });

    const thread = await h.createThread({ title: "Agent", prompt: script({ call: "t3_thread_list", as: "list" }, { say: "saw {{list.total}}" }) });
    const run = await h.waitForEnd(thread.runId!);
    expect(run.status).toBe("completed");
    expect(h.assistantTexts(thread.threadId)).toEqual(["saw 1"]);
    expect(issued.map((entry) => entry.threadId)).toEqual([thread.threadId]);
    const token = issued[0]!.credential.token;

    // The agent's token is scoped to its thread: capabilities show what it inherits.
    const asAgent = await h.connect(token, "as-agent");
    const caps = await asAgent.ok<{ inherited: { providerInstanceId: string } | null; runtimeMode: string | null }>("orchestrator_capabilities");
    expect(caps.inherited?.providerInstanceId).toBe("scripted");
    expect(caps.runtimeMode).toBe("full-access");
    expect(h.server.sessions.hasSession(thread.threadId)).toBe(true);

    // The detach writes only an effect (the outbox wake-up hears of such commits: src/engine/dispatcher.test.ts).
    const detach = await h.dispatch("provider-session.detach", { threadId: thread.threadId, reason: "test" });
    expect(detach).toMatchObject({ status: 200, body: { status: "accepted", eventCount: 0 } });
    await h.until(() => !h.server.sessions.hasSession(thread.threadId), "the session to be released");
    const session = await h.until(
      () => [...h.state.providerSessions.values()].find((s) => s.threadId === thread.threadId && s.releasedAt !== null),
      "the released session to be recorded",
    );
    expect(session.releaseReason).toBe("detached");

    expect(await h.server.credentials.resolve(token)).toEqual({ ok: false, reason: "revoked" });
    await expect(asAgent.call("t3_thread_list")).rejects.toThrow();
    const raw = await rawInitialize(h, token);
    expect(raw.status).toBe(401);
    expect(raw.message).toBe("bearer token revoked");

    // A new turn opens a new session with a fresh credential.
    const next = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: script({ call: "t3_thread_list", as: "list" }, { say: "again {{list.total}}" }) });
    expect((await h.waitForEnd(next.runId)).status).toBe("completed");
    expect(h.assistantTexts(thread.threadId, next.runId)).toEqual(["again 1"]);
    expect(issued).toHaveLength(2);
    expect(issued[1]!.credential.token).not.toBe(token);
  });
});
