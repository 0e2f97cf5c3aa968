import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { createCursorDriver } from "./driver.js";
import { type FakeCursor, fakeCursorSdk } from "./testing/fakeCursorSdk.js";

/**
 * The cursor driver inside a real Loom (session manager, credentials, MCP
 * endpoint, recorded state), at the SDK boundary: Cursor's agent runs its
 * model on Cursor's backend and cannot run offline, so @cursor/sdk is the
 * fake of its public interface (testing/fakeCursorSdk.ts). Its probe is
 * replaced too: the real one reports the SDK unusable on a Node older than
 * its engine, and no credential here.
 */

let fake: FakeCursor;
let loom: LoomHarness;

beforeEach(async () => {
  fake = fakeCursorSdk();
  const driver = createCursorDriver({
    loadSdk: () => Promise.resolve(fake.sdk),
    processEnv: { CURSOR_API_KEY: "key_cursor_loom_0123456789" },
    probe: () => ({ installed: true, authenticated: true, reason: null }),
  });
  loom = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }, { id: "cursor", driver: "cursor" }] }, drivers: [driver] });
});

afterEach(async () => {
  await loom.close();
});

describe("cursor inside Loom", () => {
  it("a question from the agent's loom_ask_user tool is a Loom user_input_request; the owner's answer reaches the agent", async () => {
    const launched = await loom.launch({ message: "ask", title: "cursor question", target: { providerInstanceId: "cursor" } });
    const runId = launched.runId!;
    await loom.waitForRun(runId, "waiting_on_user_input", 20_000);
    const request = loom.items(launched.threadId).find((item) => item.type === "user_input_request" && item.runId === runId);
    if (request?.type !== "user_input_request") throw new Error(`no question: ${dump(loom, launched.threadId)}`);
    expect(request.questions.map((question) => question.question)).toEqual(["Proceed?"]);
    const answer = await loom.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { answers: { q1: ["yes"] } } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await loom.waitForEnd(runId, 20_000);
    expect(run.status, dump(loom, launched.threadId)).toBe("completed");
    expect(loom.items(launched.threadId).find((item) => item.type === "user_input_request" && item.runId === runId)).toMatchObject({ status: "answered" });
    expect(loom.assistantTexts(launched.threadId, runId).at(-1)).toBe("answer: Proceed? → yes");
  });

  it("after a Loom restart the thread's next session resumes its Cursor agent with Loom's MCP server (no recap)", async () => {
    const launched = await loom.launch({ message: "remember PLUM-42", title: "cursor memory", target: { providerInstanceId: "cursor" } });
    expect((await loom.waitForEnd(launched.runId!, 20_000)).status).toBe("completed");
    expect(fake.created).toHaveLength(1);

    loom = await loom.restart();
    const sent = await loom.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "recall it" });
    expect((await loom.waitForEnd(sent.runId, 20_000)).status, dump(loom, launched.threadId)).toBe("completed");
    // The same agent continued: no second Agent.create, and the message went without a recap.
    expect(fake.created).toHaveLength(1);
    expect(fake.resumed.map((entry) => entry.agentId)).toEqual(["agent-1"]);
    expect(fake.resumed[0]?.options?.mcpServers?.["t3-code"]).toMatchObject({ type: "http", headers: { Authorization: expect.stringMatching(/^Bearer \S+$/) } });
    expect(fake.sends.at(-1)?.text).toBe("recall it");
    expect(fake.sends.at(-1)?.options?.mcpServers).toEqual(fake.resumed[0]?.options?.mcpServers);
    expect(loom.assistantTexts(launched.threadId, sent.runId).at(-1)).toBe("recall: remember PLUM-42");
  });
});
