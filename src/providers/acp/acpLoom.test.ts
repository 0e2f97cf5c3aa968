import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * The `acp` and `grok` drivers inside a real Loom server (session manager,
 * credentials, MCP endpoint), with the scripted ACP agent as the agent
 * process. Judged from Loom's recorded state.
 */

let agent: ScriptedAgentSetup;
let loom: LoomHarness;

beforeEach(async () => {
  agent = scriptedAgentSetup();
  const acp = agent.instance({ id: "acp", driver: "acp" });
  const grok = agent.instance({ id: "grok", driver: "grok" });
  const loading = agent.instance({ id: "acp-load", caps: { loadSession: true } });
  loom = await LoomHarness.start({
    config: {
      providers: [
        { id: "acp", driver: "acp", options: acp.options },
        { id: "grok", driver: "grok", options: grok.options },
        { id: "acp-load", driver: "acp", options: loading.options },
      ],
    },
  });
});

afterEach(async () => {
  await loom.close();
  agent.close();
});

describe("ACP drivers inside Loom", () => {
  it("the agent reaches Loom's MCP server with the session token from session/new", async () => {
    const launched = await loom.launch({ message: acpScript({ mcp: { tool: "t3_thread_list", arguments: {} }, as: "r" }, { chunk: "listed: {{r}}" }), title: "acp mcp", target: { providerInstanceId: "acp" } });
    const run = await loom.waitForEnd(launched.runId!, 20_000);
    expect(run.status, dump(loom, launched.threadId)).toBe("completed");
    const text = loom.assistantTexts(launched.threadId).at(-1) ?? "";
    expect(text).toContain("listed: ");
    // The tool result is Loom's thread list, which holds this very thread.
    expect(text).toContain('"isError":false');
    expect(text).toContain(launched.threadId);
    // The token in session/new is a Loom session credential, not the owner token.
    const created = agent.requests().find((request) => request.method === "session/new" && JSON.stringify(request.params.mcpServers) !== "[]");
    const header = JSON.stringify(created?.params.mcpServers);
    expect(header).toContain("Bearer ");
    expect(header).not.toContain(loom.ownerToken);
  });

  it("the agent's available commands are recorded as a system_notice item in the thread", async () => {
    const launched = await loom.launch({ message: acpScript({ commands: [{ name: "review", description: "Review the changes" }] }, { chunk: "ok" }), title: "acp commands", target: { providerInstanceId: "acp" } });
    const run = await loom.waitForEnd(launched.runId!, 20_000);
    expect(run.status, dump(loom, launched.threadId)).toBe("completed");
    const notices = loom.items(launched.threadId).filter((item) => item.type === "system_notice");
    expect(notices).toMatchObject([{ type: "system_notice", level: "info", runId: launched.runId, text: "The agent offers 1 command:\n/review — Review the changes" }]);
    expect(loom.assistantTexts(launched.threadId).at(-1)).toBe("ok");
  });

  it("grok: a structured question becomes a Loom user_input_request answered through Loom", async () => {
    const question = { questions: [{ question: "Which color?", options: [{ label: "red" }, { label: "blue" }] }] };
    const launched = await loom.launch({ message: acpScript({ ext: { method: "_x.ai/ask_user_question", params: question }, as: "a" }, { chunk: "got {{a}}" }), title: "grok question", target: { providerInstanceId: "grok" } });
    const runId = launched.runId!;
    await loom.waitForRun(runId, "waiting_on_user_input", 20_000);
    const request = loom.items(launched.threadId).find((item) => item.type === "user_input_request" && item.runId === runId);
    if (request?.type !== "user_input_request") throw new Error(`no question: ${dump(loom, launched.threadId)}`);
    expect(request.questions.map((q) => q.question)).toEqual(["Which color?\nOptions: red; blue"]);
    const answer = await loom.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { answers: { q1: ["blue"] } } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await loom.waitForEnd(runId, 20_000);
    expect(run.status).toBe("completed");
    expect(loom.assistantTexts(launched.threadId, runId).at(-1)).toBe('got {"outcome":"accepted","answers":{"Which color?":["blue"]}}');
  });

  it("grok: a plan to approve (exit_plan_mode) is a Loom approval; accepting it reaches the agent", async () => {
    const launched = await loom.launch({ message: acpScript({ ext: { method: "_x.ai/exit_plan_mode", params: { planContent: "1. edit\n2. test" } }, as: "a" }, { chunk: "got {{a}}" }), title: "grok plan", target: { providerInstanceId: "grok" } });
    const runId = launched.runId!;
    await loom.waitForRun(runId, "waiting_on_approval", 20_000);
    const request = loom.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
    expect(request).toMatchObject({ title: "Approve the plan and leave plan mode", detail: "1. edit\n2. test", status: "pending" });
    if (request?.type !== "approval_request") throw new Error("no approval");
    const answer = await loom.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = await loom.waitForEnd(runId, 20_000);
    expect(run.status, dump(loom, launched.threadId)).toBe("completed");
    expect(loom.assistantTexts(launched.threadId, runId).at(-1)).toBe('got {"outcome":"approved"}');
  });

  it("a permission request in approval-required mode is a Loom approval; declining reaches the agent", async () => {
    const launched = await loom.launch({
      message: acpScript({ permission: { toolCall: { toolCallId: "t1", title: "rm -rf build", kind: "execute", rawInput: { command: "rm -rf build" } } }, as: "p" }, { chunk: "outcome {{p}}" }),
      title: "acp approval",
      target: { providerInstanceId: "acp" },
      runtimeMode: "approval-required",
    });
    const runId = launched.runId!;
    await loom.waitForRun(runId, "waiting_on_approval", 20_000);
    const request = loom.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
    expect(request).toMatchObject({ requestKind: "command", title: "rm -rf build", status: "pending" });
    if (request?.type !== "approval_request") throw new Error("no approval");
    await loom.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "decline" } });
    const run = await loom.waitForEnd(runId, 20_000);
    expect(run.status).toBe("completed");
    expect(loom.assistantTexts(launched.threadId, runId).at(-1)).toBe('outcome {"outcome":"selected","optionId":"reject"}');
  });

  it("a running ACP turn takes no steering: steer is refused, auto queues behind it, and only restart cancels it (spec 000: steer without interrupting tools)", async () => {
    const launched = await loom.launch({ message: acpScript({ chunk: "working" }, { waitForCancel: true }), title: "acp steer", target: { providerInstanceId: "acp" } });
    const runId = launched.runId!;
    await loom.waitForRun(runId, "running", 20_000);
    const refused = await loom.owner.call("t3_thread_send", { threadId: launched.threadId, message: "new direction", mode: "steer" });
    expect(refused).toMatchObject({ errorCode: "thread_not_sendable" });
    const queued = await loom.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "afterwards", mode: "auto" });
    expect(queued.delivery).toBe("queued");
    expect(queued.runId).not.toBe(runId);
    expect(agent.requests().map((request) => request.method)).not.toContain("session/cancel");
    await loom.owner.ok("t3_thread_interrupt", { threadId: launched.threadId });
    expect((await loom.waitForEnd(runId, 20_000)).status).toBe("interrupted");
    expect((await loom.waitForEnd(queued.runId, 20_000)).status, dump(loom, launched.threadId)).toBe("completed");
    expect(loom.assistantTexts(launched.threadId, queued.runId)).toEqual(["Echo: afterwards"]);
  });

  it("after a Loom restart the thread's next session loads the agent's own ACP session (no recap); without session/load it gets a recap", async () => {
    const loads = await loom.launch({ message: "remember PLUM-42", title: "acp memory", target: { providerInstanceId: "acp-load" } });
    const cannot = await loom.launch({ message: "remember FIG-7", title: "acp no memory", target: { providerInstanceId: "acp" } });
    for (const runId of [loads.runId!, cannot.runId!]) expect((await loom.waitForEnd(runId, 20_000)).status).toBe("completed");
    const prompts = () => agent.requests().filter((request) => request.method === "session/prompt");
    const firstSession = prompts().find((request) => JSON.stringify(request.params.prompt).includes("PLUM-42"))?.params.sessionId;
    expect(firstSession).toMatch(/^scripted-/);

    loom = await loom.restart();
    // What an agent advertises is known once a probe or a session met it (`loom serve` probes every instance at start).
    await loom.owner.ok("orchestrator_capabilities");
    for (const threadId of [loads.threadId, cannot.threadId]) {
      const sent = await loom.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message: "what was it?" });
      expect((await loom.waitForEnd(sent.runId, 20_000)).status, dump(loom, threadId)).toBe("completed");
    }
    expect(agent.requests().filter((request) => request.method === "session/load").map((request) => request.params.sessionId)).toEqual([firstSession]);
    const last = prompts().slice(-2);
    const resumed = last.find((request) => request.params.sessionId === firstSession);
    const recapped = last.find((request) => request.params.sessionId !== firstSession);
    expect(resumed?.params).toMatchObject({ sessionId: firstSession, prompt: [{ type: "text", text: expect.not.stringContaining("<loom_context") }] });
    expect(JSON.stringify(resumed?.params.prompt)).toContain("what was it?");
    expect(JSON.stringify(recapped?.params.prompt)).toContain("FIG-7");
  });

  it("a restart of an ACP turn interrupts it and the message runs next", async () => {
    const launched = await loom.launch({ message: acpScript({ chunk: "working" }, { waitForCancel: true }), title: "acp restart", target: { providerInstanceId: "acp" } });
    const firstRunId = launched.runId!;
    await loom.waitForRun(firstRunId, "running", 20_000);
    const sent = await loom.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "new direction", mode: "restart" });
    expect(sent.runId).not.toBe(firstRunId);
    const first = await loom.waitForEnd(firstRunId, 20_000);
    expect(first.status).toBe("interrupted");
    const second = await loom.waitForEnd(sent.runId, 20_000);
    expect(second.status, dump(loom, launched.threadId)).toBe("completed");
    expect(loom.assistantTexts(launched.threadId, sent.runId)).toEqual(["Echo: new direction"]);
    expect(agent.requests().some((request) => request.method === "session/cancel")).toBe(true);
  });
});
