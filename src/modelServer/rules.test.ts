import { describe, expect, it } from "vitest";
import { type ModelApi, type NormalizedMessage, type NormalizedRequest, type ToolRef, message, normalizedRequest } from "./normalized.js";
import { RuleScriptError, parseRuleScript } from "./ruleScript.js";
import { DEFAULT_REPLY_TEXT, type ModelRule, RuleBook, chooseRule, conditionHolds, findTool, renderTemplate } from "./rules.js";
import { SIDE_TITLE, isSideRequest } from "./sideRequests.js";

const plain = (name: string): ToolRef => ({ name, callName: name, kind: "function" });
const namespaced = (namespace: string, own: string): ToolRef => ({ name: `${namespace}__${own}`, callName: own, namespace, kind: "function" });

function request(fields: { api?: ModelApi; tools?: ToolRef[]; messages?: NormalizedMessage[]; system?: string; maxTokens?: number } = {}): NormalizedRequest {
  return normalizedRequest({
    api: fields.api ?? "responses",
    model: "scripted",
    stream: true,
    toolRefs: fields.tools ?? [],
    messages: fields.messages ?? [message("user", "hello")],
    system: fields.system ?? "",
    maxTokens: fields.maxTokens,
  });
}

const toolTurn = (text: string) => [
  message("user", "start"),
  message("assistant", "", { toolCalls: [{ id: "call_1", name: "mcp__t3-code__t3_thread_list", arguments: "{}" }] }),
  message("tool", "", { toolResults: [{ callId: "call_1", text }] }),
];

describe("findTool", () => {
  const tools = [plain("exec_command"), namespaced("mcp__t3-code", "delegate_task"), plain("mcp__other__t3_thread_list")];

  it("matches a full name, a namespaced tool's own name, or a name suffix", () => {
    expect(findTool(tools, "exec_command")?.name).toBe("exec_command");
    expect(findTool(tools, "delegate_task")).toEqual(namespaced("mcp__t3-code", "delegate_task"));
    expect(findTool(tools, "mcp__t3-code__delegate_task")?.namespace).toBe("mcp__t3-code");
    expect(findTool(tools, "t3_thread_list")?.name).toBe("mcp__other__t3_thread_list");
    expect(findTool(tools, "spawn_agent")).toBeUndefined();
  });

  it("prefers an exact name over a suffix", () => {
    expect(findTool([plain("mcp__x__read"), plain("read")], "read")?.name).toBe("read");
  });
});

describe("conditionHolds", () => {
  it("checks api, tools and requireTools", () => {
    const withTools = request({ api: "anthropic", tools: [plain("mcp__t3-code__delegate_task")] });
    expect(conditionHolds({ api: "anthropic", toolAvailable: "delegate_task", requireTools: true }, withTools)).toBe(true);
    expect(conditionHolds({ api: "responses" }, withTools)).toBe(false);
    expect(conditionHolds({ toolAvailable: "spawn_agent" }, withTools)).toBe(false);
    expect(conditionHolds({ requireTools: true }, request())).toBe(false);
    expect(conditionHolds({ requireTools: false }, request())).toBe(true);
    expect(conditionHolds(undefined, request())).toBe(true);
  });

  it("checks the last message and message text", () => {
    const afterTool = request({ messages: toolTurn("3 threads") });
    expect(conditionHolds({ lastIsToolResult: true }, afterTool)).toBe(true);
    expect(conditionHolds({ lastIsToolResult: false }, afterTool)).toBe(false);
    expect(conditionHolds({ lastIsToolResult: false }, request())).toBe(true);
    expect(conditionHolds({ lastUserIncludes: "start" }, afterTool)).toBe(true);
    expect(conditionHolds({ lastUserIncludes: "Start" }, afterTool)).toBe(false);
    expect(conditionHolds({ anyMessageIncludes: "3 threads" }, afterTool)).toBe(true);
    expect(conditionHolds({ anyMessageIncludes: "system only" }, request({ system: "system only" }))).toBe(false);
  });
});

describe("chooseRule", () => {
  const delegate: ModelRule = { when: { toolAvailable: "delegate_task" }, reply: { toolCall: { tool: "delegate_task", arguments: {} } } };

  it("takes the first matching rule and skips spent ones", () => {
    const rules: ModelRule[] = [{ reply: { text: "once" }, times: 1 }, { reply: { text: "always" } }];
    expect(chooseRule(rules, [0, 0], request())).toBe(0);
    expect(chooseRule(rules, [1, 0], request())).toBe(1);
    expect(chooseRule([{ reply: { text: "never" }, times: 0 }], [0], request())).toBeUndefined();
  });

  it("skips a tool call whose tool this request does not offer", () => {
    const rules: ModelRule[] = [{ reply: { toolCall: { tool: "delegate_task", arguments: {} } } }, { reply: { text: "fallback" } }];
    expect(chooseRule(rules, [0, 0], request())).toBe(1);
    expect(chooseRule([delegate], [0], request({ tools: [namespaced("mcp__t3-code", "delegate_task")] }))).toBe(0);
  });
});

describe("renderTemplate", () => {
  it("fills the last user text and the last tool result, truncated to 2,000 characters", () => {
    const long = "x".repeat(2_500);
    expect(renderTemplate("saw: {{lastToolResult}}", request({ messages: toolTurn("3 threads") }))).toBe("saw: 3 threads");
    expect(renderTemplate("{{lastToolResult}}", request({ messages: toolTurn(long) }))).toHaveLength(2_000);
    expect(renderTemplate("you said {{lastUser}}; {{unknown}}", request())).toBe("you said hello; {{unknown}}");
    expect(renderTemplate("[{{lastToolResult}}]", request())).toBe("[]");
  });
});

describe("RuleBook", () => {
  const tools = [namespaced("mcp__t3-code", "delegate_task")];

  it("answers OK when nothing matches, numbers tool calls and counts times", () => {
    const book = new RuleBook([
      { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "delegate_task", arguments: { prompt: "do {{lastUser}}" } } }, times: 2 },
      { when: { lastIsToolResult: true }, reply: { text: "done: {{lastToolResult}}" } },
    ]);
    const first = book.answer(request({ tools }));
    expect(first.reply).toEqual({ type: "toolCall", callId: "call_1", tool: tools[0], arguments: { prompt: "do hello" } });
    expect(first.ruleIndex).toBe(0);
    expect(book.answer(request({ tools })).reply).toMatchObject({ callId: "call_2" });
    expect(book.answer(request({ tools })).reply).toEqual({ type: "text", text: DEFAULT_REPLY_TEXT });
    expect(book.answer(request({ tools, messages: toolTurn("ok") })).reply).toEqual({ type: "text", text: "done: ok" });
  });

  it("starts times again on replace but keeps numbering calls", () => {
    const book = new RuleBook([{ reply: { toolCall: { tool: "delegate_task", arguments: {} } }, times: 1 }]);
    book.answer(request({ tools }));
    expect(book.answer(request({ tools })).ruleIndex).toBeUndefined();
    book.replace([{ reply: { toolCall: { tool: "delegate_task", arguments: {} } }, times: 1 }]);
    expect(book.answer(request({ tools })).reply).toMatchObject({ callId: "call_2" });
  });

  it("answers Claude's title request without spending a rule", () => {
    const title = request({
      api: "anthropic",
      system: "You are naming a coding session so the user can pick it out of a long list of sessions. ... Return JSON with a single \"title\" field.",
      messages: [message("user", "<session>\nsay hi\n</session>\n\nWrite the title in the predominant language")],
    });
    const book = new RuleBook([{ reply: { text: "main" }, times: 1 }]);
    const side = book.answer(title);
    expect(side).toEqual({ fault: null, reply: { type: "text", text: JSON.stringify({ title: SIDE_TITLE }) }, ruleIndex: undefined, side: true });
    expect(book.answer(request({ api: "anthropic", tools: [plain("Bash")] })).reply).toEqual({ type: "text", text: "main" });
  });
});

describe("isSideRequest", () => {
  it("takes tool-free Anthropic bookkeeping requests, never the conversation", () => {
    expect(isSideRequest(request({ api: "anthropic", messages: [message("user", "quota")] }))).toBe(true);
    expect(isSideRequest(request({ api: "anthropic", maxTokens: 1 }))).toBe(true);
    expect(isSideRequest(request({ api: "anthropic", system: "Summarize this conversation" }))).toBe(true);
    expect(isSideRequest(request({ api: "anthropic", system: "You are a Claude agent, built on Anthropic's Claude Agent SDK. Summarize..." }))).toBe(false);
    expect(isSideRequest(request({ api: "anthropic", system: "Write a title", tools: [plain("Bash")] }))).toBe(false);
    expect(isSideRequest(request({ api: "anthropic" }))).toBe(false);
    expect(isSideRequest(request({ api: "chat", system: "Generate a title" }))).toBe(false);
  });
});

describe("parseRuleScript", () => {
  it("accepts the documented rule shapes", () => {
    const rules = parseRuleScript({
      rules: [
        { when: { toolAvailable: "delegate_task", lastIsToolResult: false }, reply: { toolCall: { tool: "delegate_task", arguments: { prompt: "x" } } }, times: 1 },
        { when: { api: "anthropic", requireTools: true }, reply: { text: "{{lastToolResult}}" } },
        { reply: { text: "hi" } },
      ],
    });
    expect(rules).toHaveLength(3);
  });

  it("names the first bad field", () => {
    expect(() => parseRuleScript({ rules: [{ when: { api: "bard" }, reply: { text: "x" } }] })).toThrow(RuleScriptError);
    expect(() => parseRuleScript({ rules: [{ reply: { txt: "x" } }] })).toThrow(/rules\.0\.reply/);
    expect(() => parseRuleScript([])).toThrow(/script/);
  });
});
