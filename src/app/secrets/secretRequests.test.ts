import { createHash, randomUUID } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { LoomHarness, TEST_PROVIDERS, script } from "../../testkit/loomHarness.js";

/**
 * request_secret end to end: a scripted agent asks over real MCP, the owner
 * answers over the owner-only HTTP route, and the value reaches only the
 * requesting session's `run` steps. It must never be written anywhere: the
 * test greps every file of the state dir (loom.db, its WAL, search.db, ...)
 * and every line the server logged.
 */

const SECRET = `v4lue-${randomUUID()}-not-for-the-log`;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const READ_TOKEN = 'printf %s "$DEPLOY_TOKEN" | sha256sum';

let h: LoomHarness;
const logs: string[] = [];

beforeAll(async () => {
  h = await LoomHarness.start({
    config: { providers: [...TEST_PROVIDERS, { id: "noenv", driver: "scripted", options: { capabilities: { turnEnvironment: false } } }] },
    log: (line) => logs.push(line),
  });
});
afterAll(async () => {
  await h.close();
});

type SecretItem = TurnItemOf<"secret_request">;

function secretItems(threadId: string): SecretItem[] {
  return h.items(threadId).filter((item): item is SecretItem => item.type === "secret_request");
}

/** A thread whose agent asks for DEPLOY_TOKEN; resolves once its turn is over. */
async function asking(envVarName = "DEPLOY_TOKEN", target = "scripted"): Promise<{ threadId: string; runId: string }> {
  const thread = await h.createThread({
    target: { providerInstanceId: target },
    prompt: script({ call: "request_secret", args: { secretName: "Deploy token", envVarName, description: "to push the release" }, as: "s" }, { say: "asked: {{s.status}}" }),
  });
  await h.waitForEnd(thread.runId!);
  return { threadId: thread.threadId, runId: thread.runId! };
}

function answer(threadId: string, requestId: string, body: unknown, token: string | null = h.ownerToken): Promise<Response> {
  return fetch(`${h.server.url}/api/orchestration/threads/${encodeURIComponent(threadId)}/secret-requests/${encodeURIComponent(requestId)}`, {
    method: "POST",
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Run the `run` step that hashes $DEPLOY_TOKEN in a thread's next turn; returns its output. */
async function hashOfTokenIn(threadId: string): Promise<string> {
  const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message: script({ run: READ_TOKEN }), mode: "queue" });
  await h.waitForEnd(sent.runId);
  const command = h.items(threadId).findLast((item) => item.type === "command_execution" && item.runId === sent.runId);
  return command?.type === "command_execution" ? command.outputPreview : "";
}

/** Every file under dir, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function filesHolding(text: string): string[] {
  const needle = Buffer.from(text, "utf8");
  return filesUnder(h.server.stateDir.root).filter((path) => readFileSync(path).includes(needle));
}

describe("request_secret", () => {
  it("the owner's value reaches only the requesting session's commands, and is written nowhere", async () => {
    const { threadId, runId } = await asking();
    const [item] = secretItems(threadId);
    expect(item).toMatchObject({ runId, secretName: "Deploy token", envVarName: "DEPLOY_TOKEN", description: "to push the release", status: "pending" });
    expect(h.assistantTexts(threadId)).toEqual(["asked: pending"]);

    const listed = await fetch(`${h.server.url}/api/orchestration/threads/${encodeURIComponent(threadId)}/secret-requests`, { headers: { authorization: `Bearer ${h.ownerToken}` } });
    expect(await listed.json()).toEqual({ threadId, requests: [{ requestId: item!.id, threadId, secretName: "Deploy token", envVarName: "DEPLOY_TOKEN", status: "pending" }] });

    const supplied = await answer(threadId, item!.id, { value: SECRET });
    expect(supplied.status).toBe(200);
    expect(await supplied.json()).toEqual({ requestId: item!.id, threadId, secretName: "Deploy token", envVarName: "DEPLOY_TOKEN", status: "provided" });
    expect(secretItems(threadId)[0]!.status).toBe("provided");

    // The agent is told in a follow-up turn carried by a notification.
    const followUp = await h.until(() => h.runs(threadId).find((run) => run.kind === "system_follow_up"), "the follow-up run");
    await h.waitForEnd(followUp.id);
    const notice = h.items(threadId).find((candidate) => candidate.type === "notification");
    expect(notice).toMatchObject({ runId: followUp.id, title: "Secret provided: Deploy token" });

    // Its next turn's commands find the value; another thread's session does not.
    expect(await hashOfTokenIn(threadId)).toContain(sha256(SECRET));
    const other = await h.createThread({ prompt: script({ say: "hi" }) });
    await h.waitForEnd(other.runId!);
    expect(await hashOfTokenIn(other.threadId)).toContain(sha256(""));

    // Nowhere on disk while the server runs (the WAL holds the latest writes), nor in any log line.
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.filter((line) => line.includes(SECRET))).toEqual([]);
    expect(filesUnder(h.server.stateDir.root).some((path) => path.endsWith("loom.db-wal"))).toBe(true);
    expect(filesHolding(SECRET)).toEqual([]);
    // Nor in anything a reader of the thread gets.
    const read = await h.owner.ok("t3_thread_read", { threadId, view: "activity", afterPosition: -1 });
    expect(JSON.stringify(read)).not.toContain(SECRET);
    const search = await h.owner.ok("t3_thread_search", { query: SECRET.split("-")[0]! });
    expect(JSON.stringify(search)).not.toContain(SECRET);
  });

  it("declining tells the agent; a second answer and a malformed one are refused without echoing the body", async () => {
    const { threadId } = await asking();
    const [item] = secretItems(threadId);
    const declined = await answer(threadId, item!.id, { decline: true });
    expect(await declined.json()).toMatchObject({ status: "declined" });
    await h.until(() => h.items(threadId).find((candidate) => candidate.type === "notification" && candidate.title === "Secret declined: Deploy token"), "the decline notice");

    const again = await answer(threadId, item!.id, { value: "x" });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("already declined") } });

    const garbage = `{"value": "${SECRET}", oops`;
    const malformed = await answer(threadId, item!.id, garbage);
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).not.toContain(SECRET);
    const both = await answer(threadId, item!.id, { value: SECRET, decline: true });
    expect(both.status).toBe(400);
    expect(await both.text()).not.toContain(SECRET);
    expect((await answer(threadId, "secret-request:nope", { value: "x" })).status).toBe(400);
    expect((await answer(threadId, item!.id, { value: "x" }, null)).status).toBe(401);
    expect((await answer(threadId, item!.id, { value: "x" }, "wrong-token")).status).toBe(401);
    expect(logs.filter((line) => line.includes(SECRET))).toEqual([]);
  });

  it("a request whose session has ended is cancelled when answered: nothing could receive the value", async () => {
    const { threadId } = await asking();
    const [item] = secretItems(threadId);
    const sessionId = item!.providerSessionId!;
    expect((await h.dispatch("provider-session.detach", { threadId })).status).toBe(200);
    await h.until(() => h.state.providerSessions.get(sessionId)?.releasedAt, "the session to be released");
    const late = await answer(threadId, item!.id, { value: SECRET });
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("has ended") } });
    expect(secretItems(threadId)[0]!.status).toBe("cancelled");
  });

  it("refuses the owner, a system variable, and a provider that cannot pass secrets to commands", async () => {
    const owner = await h.owner.call("request_secret", { secretName: "x", envVarName: "X_TOKEN" });
    expect(owner.errorCode).toBe("capability_denied");
    const badName = await h.owner.call("request_secret", { secretName: "x", envVarName: "lower_case" });
    expect(badName.errorCode).toBe("invalid_request");

    const reserved = await h.createThread({ prompt: script({ call: "request_secret", args: { secretName: "path", envVarName: "LD_PRELOAD" }, as: "s" }, { say: "{{s.error.code}}: {{s.error.message}}" }) });
    await h.waitForEnd(reserved.runId!);
    expect(h.assistantTexts(reserved.threadId)[0]).toMatch(/^invalid_request: LD_PRELOAD is a system variable/);
    expect(secretItems(reserved.threadId)).toEqual([]);

    const noenv = await h.createThread({ target: { providerInstanceId: "noenv" }, prompt: script({ call: "request_secret", args: { secretName: "t", envVarName: "T_TOKEN" }, as: "s" }, { say: "{{s.error.code}}" }) });
    await h.waitForEnd(noenv.runId!);
    expect(h.assistantTexts(noenv.threadId)).toEqual(["invalid_request"]);
    expect(secretItems(noenv.threadId)).toEqual([]);
  });

  it("after a clean shutdown the value is in none of the state dir's files", async () => {
    await h.server.close();
    expect(filesHolding(SECRET)).toEqual([]);
    expect(logs.filter((line) => line.includes(SECRET))).toEqual([]);
  });
});
