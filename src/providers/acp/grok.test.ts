import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderSessionRuntime } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup, waitForEvent } from "../../testkit/acpAgentHarness.js";
import { createAcpDriver, createGrokDriver } from "./driver.js";
import { grokExtensions } from "./grok.js";
import { parseAcpOptions } from "./options.js";

/**
 * The Grok flavor. No Grok CLI can be installed here, so the agent is the
 * scripted ACP agent sending Grok's extension requests over real ACP.
 */

const QUESTION = {
  questions: [
    { question: "Which color?", header: "Color", options: [{ label: "red", description: "warm" }, { label: "blue", description: "cool" }], multiSelect: false },
    { question: "Anything else?", options: [] },
  ],
};

describe("grok extensions (pure)", () => {
  it("turns ask_user_question into a user_input_request and Loom's answers into Grok's", () => {
    const item = grokExtensions.item("_x.ai/ask_user_question", { sessionId: "s", ...QUESTION }, "acp-extension-1");
    expect(item).toEqual({
      kind: "user_input_request",
      requestId: "acp-extension-1",
      questions: [
        { id: "q1", question: "Color: Which color?\nOptions: red (warm); blue (cool)" },
        { id: "q2", question: "Anything else?" },
      ],
    });
    expect(grokExtensions.result("_x.ai/ask_user_question", QUESTION, { answers: { q1: ["blue"], q2: "ship it" } })).toEqual({
      outcome: "accepted",
      answers: { "Which color?": ["blue"], "Anything else?": ["Other"] },
      annotations: { "Anything else?": { notes: "ship it" } },
    });
    expect(grokExtensions.result("x.ai/ask_user_question", { params: QUESTION }, { dismissed: true })).toEqual({ outcome: "cancelled" });
    expect(() => grokExtensions.result("_x.ai/ask_user_question", QUESTION, { decision: "accept" })).toThrow(expect.objectContaining({ code: "protocol_error" }));
    expect(grokExtensions.item("_x.ai/ask_user_question", { questions: [] }, "r")).toBeNull();
  });

  it("turns exit_plan_mode into an approval and the decision into Grok's outcome", () => {
    expect(grokExtensions.item("_x.ai/exit_plan_mode", { planContent: "1. read\n2. fix" }, "r1")).toEqual({
      kind: "approval_request",
      requestId: "r1",
      requestKind: "permission",
      title: "Approve the plan and leave plan mode",
      detail: "1. read\n2. fix",
    });
    expect(grokExtensions.result("_x.ai/exit_plan_mode", {}, { decision: "accept" })).toEqual({ outcome: "approved" });
    expect(grokExtensions.result("_x.ai/exit_plan_mode", {}, { decision: "decline" })).toMatchObject({ outcome: "abandoned" });
    expect(grokExtensions.cancelled("_x.ai/exit_plan_mode")).toMatchObject({ outcome: "abandoned" });
  });

  it("defaults to `grok agent stdio`", () => {
    const options = parseAcpOptions({ id: "grok", driver: "grok", enabled: true, displayName: null, models: null, options: {} }, { command: "grok", args: ["agent", "stdio"] });
    expect(options).toMatchObject({ command: "grok", args: ["agent", "stdio"], mcpServerName: "t3-code" });
  });
});

describe("grok driver through a real ACP agent", () => {
  let agent: ScriptedAgentSetup;
  let session: ProviderSessionRuntime | null = null;

  beforeEach(() => {
    agent = scriptedAgentSetup();
  });

  afterEach(async () => {
    await session?.stop();
    agent.close();
  });

  async function open(driver = createGrokDriver()) {
    const events: NormalizedProviderEvent[] = [];
    session = await driver.openSession({
      instance: agent.instance({ id: "grok", driver: "grok" }),
      threadId: "thread:1",
      providerSessionId: "ps:1",
      cwd: agent.dir,
      runtimeMode: "full-access",
      interactionMode: "default",
      model: null,
      mcp: null,
      onEvent: (event) => events.push(event),
    });
    return { session, events };
  }

  const ASK = acpScript({ ext: { method: "_x.ai/ask_user_question", params: QUESTION }, as: "a" }, { chunk: "answer: {{a}}" });

  it("a structured question waits for Loom's answer, which reaches the agent", async () => {
    const { session, events } = await open();
    await session.startTurn({ runId: "run-1", input: ASK });
    const asked = await waitForEvent(events, (event) => event.type === "item.completed" && event.item.kind === "user_input_request", "the question");
    if (asked.type !== "item.completed" || asked.item.kind !== "user_input_request") throw new Error("no question");
    expect(asked.item.questions.map((question) => question.id)).toEqual(["q1", "q2"]);
    await session.respondToRequest({ requestId: asked.item.requestId, response: { answers: { q1: ["red"] } } });
    await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(events).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: 'answer: {"outcome":"accepted","answers":{"Which color?":["red"]}}' } }));
  });

  it("has no native fork, even from an agent that advertises it, and no steering (interrupt-and-restart instead)", async () => {
    const driver = createGrokDriver();
    const instance = agent.instance({ id: "grok", driver: "grok", caps: { fork: true, loadSession: true } });
    expect(await driver.probe(instance)).toMatchObject({ installed: true, authenticated: true });
    expect(driver.capabilities(instance)).toMatchObject({ steering: false, restart: true, interrupt: true, fork: false, resume: true });
    // Neither does the generic flavor: Loom never calls a native fork (portable context instead).
    const generic = createAcpDriver();
    await generic.probe(instance);
    expect(generic.capabilities(instance)).toMatchObject({ fork: false, resume: true });
  });

  it("the generic acp driver gets no xAI extensions: the agent sees method-not-found", async () => {
    const { session, events } = await open(createAcpDriver());
    await session.startTurn({ runId: "run-1", input: ASK });
    const end = await waitForEvent(events, (event) => event.type === "turn.completed", "the end of the turn");
    expect(events.some((event) => event.type === "item.completed" && event.item.kind === "user_input_request")).toBe(false);
    // The scripted agent's request failed, so its prompt failed.
    expect(end).toMatchObject({ status: "failed" });
    expect(end.type === "turn.completed" ? end.error : "").toMatch(/Method not found/i);
  });
});
