import type { PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import type { ProviderItem } from "../events.js";
import { ClaudePermissionBroker, approvalItem, approvalResult, parseApprovalResponse, questionsOf, requestKindOf, sessionOnly } from "./permissions.js";
import { loadFixture } from "./testing/fixtures.js";

/** What Claude Code suggested for `touch made.txt` in default mode (recorded from a probe). */
const TOUCH_SUGGESTIONS: PermissionUpdate[] = [
  { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "touch made.txt" }], behavior: "allow", destination: "localSettings" },
  { type: "addDirectories", directories: ["/tmp/work"], destination: "session" },
  { type: "setMode", mode: "acceptEdits", destination: "session" },
];

interface Harness {
  readonly broker: ClaudePermissionBroker;
  readonly emitted: { itemId: string; item: ProviderItem }[];
  /** Calls canUseTool as the SDK does and returns the pending answer. */
  ask(toolName: string, input: Record<string, unknown>, extra?: Record<string, unknown>): { result: Promise<PermissionResult>; abort: AbortController };
}

function harness(accepting = true): Harness {
  const emitted: { itemId: string; item: ProviderItem }[] = [];
  const broker = new ClaudePermissionBroker((itemId, item) => {
    emitted.push({ itemId, item });
    return accepting;
  });
  let n = 0;
  return {
    broker,
    emitted,
    ask(toolName, input, extra = {}) {
      const abort = new AbortController();
      n += 1;
      const result = broker.canUseTool(toolName, input, { signal: abort.signal, toolUseID: `toolu_${n}`, requestId: `req-${n}`, ...extra }) as Promise<PermissionResult>;
      return { result, abort };
    },
  };
}

describe("permissions: items from recorded canUseTool calls", () => {
  it("a Bash call under approval-required is a command approval naming the command", () => {
    const [call] = loadFixture("bash-approved").permissionRequests;
    const item = approvalItem("claude-request:call_2", call!.toolName, call!.input, { description: call!.options.description as string });
    expect(item).toEqual({
      kind: "approval_request",
      requestId: "claude-request:call_2",
      requestKind: "command",
      title: "Run command: echo hi",
      detail: "$ echo hi\nsay hi",
    });
  });

  it("a blocked path is shown in the detail", () => {
    const [call] = loadFixture("bash-declined").permissionRequests;
    const item = approvalItem("r", call!.toolName, call!.input, { blockedPath: call!.options.blockedPath as string });
    expect(item.detail).toMatch(/^\$ touch made.txt\nPath: \/tmp\/loom-claude-rec-.*\/made.txt$/);
  });

  it("AskUserQuestion becomes questions q1.. with the options in the text", () => {
    const [call] = loadFixture("ask-user").permissionRequests;
    expect(call!.toolName).toBe("AskUserQuestion");
    const { questions, item } = questionsOf(call!.input);
    expect(questions).toEqual([{ id: "q1", text: "Which color?" }]);
    expect(item).toEqual({ kind: "user_input_request", questions: [{ id: "q1", question: "Which color?\nOptions: red (warm); blue (cool)" }] });
  });

  it("request kinds: Bash is a command, file writers a file change, readers a file read, the rest a permission", () => {
    expect(["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "Grep", "WebFetch", "mcp__x__y"].map(requestKindOf)).toEqual([
      "command",
      "file-change",
      "file-change",
      "file-change",
      "file-change",
      "file-read",
      "file-read",
      "permission",
      "permission",
    ]);
  });

  it("a Write approval is titled by its path; the prompt's own title wins", () => {
    expect(approvalItem("r", "Write", { file_path: "/w/a.txt", content: "x" }, {}).title).toBe("Write /w/a.txt");
    expect(approvalItem("r", "Write", { file_path: "/w/a.txt" }, { title: "Claude wants to write a.txt" }).title).toBe("Claude wants to write a.txt");
    expect(approvalItem("r", "WebFetch", { url: "https://x" }, {})).toMatchObject({ requestKind: "permission", title: "Use tool WebFetch", detail: 'Input: {"url":"https://x"}' });
  });
});

describe("permissions: decisions", () => {
  it("maps Loom decisions to SDK permission results", () => {
    const input = { command: "touch made.txt" };
    expect(approvalResult("accept", input, TOUCH_SUGGESTIONS)).toEqual({ behavior: "allow", updatedInput: input });
    expect(approvalResult("decline", input, undefined)).toEqual({ behavior: "deny", message: "The user declined this tool call." });
    expect(approvalResult("cancel", input, undefined)).toMatchObject({ behavior: "deny", interrupt: true });
  });

  it("accept_for_session keeps Claude's suggestions in the session and never changes the mode", () => {
    expect(approvalResult("accept_for_session", { command: "touch made.txt" }, TOUCH_SUGGESTIONS)).toEqual({
      behavior: "allow",
      updatedInput: { command: "touch made.txt" },
      updatedPermissions: [
        { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "touch made.txt" }], behavior: "allow", destination: "session" },
        { type: "addDirectories", directories: ["/tmp/work"], destination: "session" },
      ],
    });
    expect(sessionOnly([])).toEqual([]);
  });

  it("reads both spellings of accept-for-session; a dismissed approval cancels", () => {
    expect(parseApprovalResponse({ decision: "accept_for_session" })).toBe("accept_for_session");
    expect(parseApprovalResponse({ decision: "acceptForSession" })).toBe("accept_for_session");
    expect(parseApprovalResponse({ dismissed: true })).toBe("cancel");
    expect(parseApprovalResponse({ answers: {} })).toBeNull();
  });
});

describe("permissions: the broker", () => {
  it("emits the approval item, then answers the SDK with the decision", async () => {
    const h = harness();
    const { result } = h.ask("Bash", { command: "echo hi" }, { description: "say hi", suggestions: TOUCH_SUGGESTIONS });
    expect(h.emitted).toEqual([
      { itemId: "claude-request:toolu_1:request", item: expect.objectContaining({ kind: "approval_request", requestId: "claude-request:toolu_1", requestKind: "command" }) },
    ]);
    expect(h.broker.pending).toBe(1);
    h.broker.respond("claude-request:toolu_1", { decision: "accept" });
    await expect(result).resolves.toEqual({ behavior: "allow", updatedInput: { command: "echo hi" } });
    expect(h.broker.pending).toBe(0);
  });

  it("answers AskUserQuestion with the answers keyed by question text, several joined", async () => {
    const h = harness();
    const input = {
      questions: [
        { question: "Which color?", header: "Color", options: [{ label: "red", description: "" }, { label: "blue", description: "" }], multiSelect: false },
        { question: "Which sizes?", header: "Size", options: [{ label: "S", description: "" }, { label: "M", description: "" }], multiSelect: true },
      ],
    };
    const { result } = h.ask("AskUserQuestion", input);
    expect(h.emitted[0]?.item).toEqual({
      kind: "user_input_request",
      requestId: "claude-request:toolu_1",
      questions: [
        { id: "q1", question: "Which color?\nOptions: red; blue" },
        { id: "q2", question: "Which sizes?\nOptions (several allowed): S; M" },
      ],
    });
    h.broker.respond("claude-request:toolu_1", { answers: { q1: ["blue"], q2: ["S", "M"] } });
    await expect(result).resolves.toEqual({ behavior: "allow", updatedInput: { ...input, answers: { "Which color?": "blue", "Which sizes?": "S, M" } } });
  });

  it("a dismissed question denies the tool call", async () => {
    const h = harness();
    const { result } = h.ask("AskUserQuestion", { questions: [{ question: "Why?", header: "Why", options: [], multiSelect: false }] });
    h.broker.respond("claude-request:toolu_1", { dismissed: true });
    await expect(result).resolves.toMatchObject({ behavior: "deny" });
  });

  it("rejects an answer of the wrong shape and keeps the request open", async () => {
    const h = harness();
    const { result } = h.ask("Bash", { command: "ls" });
    expect(() => h.broker.respond("claude-request:toolu_1", { answers: { q1: ["x"] } })).toThrow(expect.objectContaining({ code: "protocol_error" }));
    expect(() => h.broker.respond("claude-request:nope", { decision: "accept" })).toThrow(expect.objectContaining({ code: "request_not_found" }));
    h.broker.respond("claude-request:toolu_1", { decision: "decline" });
    await expect(result).resolves.toMatchObject({ behavior: "deny" });
  });

  it("the SDK's abort signal and abandonAll deny and forget the request", async () => {
    const h = harness();
    const first = h.ask("Bash", { command: "ls" });
    const second = h.ask("Write", { file_path: "/a" });
    first.abort.abort();
    await expect(first.result).resolves.toMatchObject({ behavior: "deny", interrupt: true });
    h.broker.abandonAll();
    await expect(second.result).resolves.toMatchObject({ behavior: "deny" });
    expect(h.broker.pending).toBe(0);
    expect(() => h.broker.respond("claude-request:toolu_1", { decision: "accept" })).toThrow(expect.objectContaining({ code: "request_not_found" }));
  });

  it("ExitPlanMode asks with the plan the model wrote, though its request comes without it", async () => {
    const emitted: ProviderItem[] = [];
    const broker = new ClaudePermissionBroker(
      (_, item) => emitted.push(item) > 0,
      (id) => (id === "toolu_plan" ? { plan: "1. read\n2. fix" } : undefined),
    );
    const result = broker.canUseTool("ExitPlanMode", {}, { signal: new AbortController().signal, toolUseID: "toolu_plan", requestId: "r" });
    expect(emitted[0]).toMatchObject({ kind: "approval_request", requestKind: "permission", title: "Approve the plan and leave plan mode", detail: expect.stringMatching(/^1\. read\n2\. fix\n/) });
    broker.respond("claude-request:toolu_plan", { decision: "accept" });
    await expect(result).resolves.toEqual({ behavior: "allow", updatedInput: {} });
  });

  it("denies at once when no turn can carry the request", async () => {
    const h = harness(false);
    await expect(h.ask("Bash", { command: "ls" }).result).resolves.toMatchObject({ behavior: "deny" });
    expect(h.broker.pending).toBe(0);
  });
});
