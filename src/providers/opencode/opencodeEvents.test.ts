import type { Event } from "@opencode-ai/sdk/v2";
import { describe, expect, it } from "vitest";
import { OpencodeEventMapper } from "./opencodeEvents.js";
import { answerFor, permissionItem, questionItem } from "./requests.js";

/** Events shaped as OpenCode 1.18.33 sent them in opencode.e2e.test.ts runs. */
const S = "ses_1";
const ev = (type: string, properties: Record<string, unknown>): Event => ({ id: `evt_${type}`, type, properties: { sessionID: S, ...properties } }) as unknown as Event;
const user = (id: string): Event => ev("message.updated", { info: { id, sessionID: S, role: "user", time: { created: 1 } } });
const assistant = (id: string, parentID: string, extra: Record<string, unknown> = {}): Event => ev("message.updated", { info: { id, sessionID: S, role: "assistant", parentID, time: { created: 1 }, ...extra } });
const part = (p: Record<string, unknown>): Event => ev("message.part.updated", { part: { sessionID: S, ...p }, time: 1 });
const tool = (id: string, toolName: string, state: Record<string, unknown>): Event => part({ id, messageID: "a1", type: "tool", tool: toolName, callID: "c1", state });

describe("OpencodeEventMapper", () => {
  it("maps finished assistant parts and skips the user's prompt, unfinished parts and repeats", () => {
    const mapper = new OpencodeEventMapper("/w");
    mapper.startTurn();
    expect(mapper.map(user("u1"), "r")).toEqual([]);
    expect(mapper.map(part({ id: "p0", messageID: "u1", type: "text", text: "prompt" }), "r")).toEqual([]);
    mapper.map(assistant("a1", "u1"), "r");
    expect(mapper.map(part({ id: "p1", messageID: "a1", type: "text", text: "", time: { start: 1 } }), "r")).toEqual([]);
    expect(mapper.map(ev("message.part.delta", { messageID: "a1", partID: "p1", field: "text", delta: "Hi" }), "r")).toEqual([{ type: "item.delta", runId: "r", itemId: "p1", text: "Hi" }]);
    const done = part({ id: "p1", messageID: "a1", type: "text", text: "Hi", time: { start: 1, end: 2 } });
    expect(mapper.map(done, "r")).toEqual([{ type: "item.completed", runId: "r", itemId: "p1", item: { kind: "assistant_message", text: "Hi" } }]);
    expect(mapper.map(done, "r")).toEqual([]);
    expect(mapper.map(part({ id: "p2", messageID: "a1", type: "reasoning", text: "hmm", time: { start: 1, end: 2 } }), "r")).toEqual([
      { type: "item.completed", runId: "r", itemId: "p2", item: { kind: "reasoning", text: "hmm" } },
    ]);
    expect(mapper.firstUserMessageId()).toBe("u1");
    expect(mapper.allAnswered()).toBe(false);
    mapper.map(assistant("a1", "u1", { time: { created: 1, completed: 2 } }), "r");
    expect(mapper.allAnswered()).toBe(true);
  });

  it("maps tools: bash to command_execution, edit/write to file_change, todowrite to todo_list, MCP and others to dynamic_tool", () => {
    const mapper = new OpencodeEventMapper("/w");
    mapper.startTurn();
    expect(mapper.map(tool("t0", "bash", { status: "running", input: { command: "ls" }, time: { start: 1 } }), "r")).toEqual([]);
    expect(mapper.map(tool("t1", "bash", { status: "completed", input: { command: "ls" }, output: "a\n", metadata: { exit: 0 }, title: "ls", time: { start: 1, end: 4 } }), "r")[0]).toMatchObject({
      item: { kind: "command_execution", command: "ls", cwd: "/w", exitCode: 0, outputPreview: "a\n", outputTruncated: false, durationMs: 3 },
    });
    expect(mapper.map(tool("t2", "edit", { status: "completed", input: { filePath: "/w/a.ts" }, output: "", metadata: { filediff: { additions: 2, deletions: 1 } }, title: "", time: { start: 1, end: 2 } }), "r")[0]).toMatchObject({
      item: { kind: "file_change", changes: [{ path: "/w/a.ts", kind: "update", additions: 2, deletions: 1 }] },
    });
    expect(mapper.map(tool("t3", "write", { status: "completed", input: { filePath: "/w/b.ts" }, output: "", metadata: {}, title: "", time: { start: 1, end: 2 } }), "r")[0]).toMatchObject({
      item: { kind: "file_change", changes: [{ path: "/w/b.ts", kind: "add" }] },
    });
    const todos = [{ content: "a", status: "in_progress" }, { content: "b", status: "cancelled" }, { content: "c", status: "pending" }];
    expect(mapper.map(tool("t4", "todowrite", { status: "completed", input: { todos }, output: "", metadata: {}, title: "", time: { start: 1, end: 2 } }), "r")[0]).toMatchObject({
      item: { kind: "todo_list", items: [{ text: "a", status: "in_progress" }, { text: "b", status: "completed" }, { text: "c", status: "pending" }] },
    });
    expect(mapper.map(tool("t5", "t3-code_t3_thread_list", { status: "completed", input: {}, output: '{"total":0}', metadata: {}, title: "", time: { start: 1, end: 2 } }), "r")[0]).toMatchObject({
      item: { kind: "dynamic_tool", toolName: "t3-code_t3_thread_list", arguments: {}, result: '{"total":0}', status: "completed" },
    });
    expect(mapper.map(tool("t6", "edit", { status: "error", input: { filePath: "/w/a.ts" }, error: "no match", time: { start: 1, end: 2 } }), "r")[0]).toMatchObject({
      item: { kind: "dynamic_tool", toolName: "edit", result: "no match", status: "failed" },
    });
  });

  it("usage sums the turn's model steps (cache reads are part of the input); errors are items and fail the turn, aborts are not", () => {
    const mapper = new OpencodeEventMapper("/w");
    mapper.startTurn();
    const step = (id: string, input: number, output: number, read: number, cost: number): Event =>
      part({ id, messageID: "a1", type: "step-finish", reason: "stop", cost, tokens: { input, output, reasoning: 1, cache: { read, write: 0 } } });
    expect(mapper.map(step("s1", 10, 2, 5, 0), "r")).toEqual([{ type: "usage", runId: "r", inputTokens: 15, outputTokens: 3, cachedInputTokens: 5 }]);
    expect(mapper.map(step("s2", 20, 4, 0, 0.5), "r")).toEqual([{ type: "usage", runId: "r", inputTokens: 35, outputTokens: 8, cachedInputTokens: 5, costUsd: 0.5 }]);
    expect(mapper.map(ev("session.error", { error: { name: "MessageAbortedError", data: { message: "x" } } }), "r")).toEqual([]);
    expect(mapper.error()).toBeNull();
    expect(mapper.map(ev("session.error", { error: { name: "APIError", data: { message: "429 slow down" } } }), "r")).toEqual([
      { type: "item.completed", runId: "r", itemId: "error-evt_session.error", item: { kind: "error", message: "APIError: 429 slow down" } },
      { type: "limit", runId: "r", kind: "rate_limit", retryAfterMs: null, resetAt: null, providerRetrying: false, message: "429 slow down" },
    ]);
    expect(mapper.error()).toBe("APIError: 429 slow down");
    mapper.startTurn();
    expect(mapper.error()).toBeNull();
  });
});

describe("opencode requests", () => {
  it("a bash permission is a command approval; Loom's decisions become once / always / reject", () => {
    const { pending, item, itemId } = permissionItem({ id: "per_1", sessionID: S, permission: "bash", patterns: ["rm -rf build"], metadata: { command: "rm -rf build" }, always: ["rm *"] });
    expect(itemId).toBe("request-per_1");
    expect(item).toEqual({ kind: "approval_request", requestId: "per_1", requestKind: "command", title: "Run rm -rf build", detail: 'patterns: rm -rf build\n"always" would allow: rm *' });
    expect(answerFor(pending, { decision: "accept" })).toEqual({ kind: "permission", id: "per_1", reply: "once" });
    expect(answerFor(pending, { decision: "accept_for_session" })).toEqual({ kind: "permission", id: "per_1", reply: "always" });
    expect(answerFor(pending, { decision: "decline" })).toEqual({ kind: "permission", id: "per_1", reply: "reject" });
    expect(answerFor(pending, { dismissed: true })).toEqual({ kind: "permission", id: "per_1", reply: "reject" });
    expect(answerFor(pending, { answers: {} })).toBeNull();
    expect(permissionItem({ id: "per_2", sessionID: S, permission: "edit", patterns: ["a.ts"], metadata: {}, always: [] }).item).toMatchObject({ requestKind: "file-change", title: "Edit a.ts" });
  });

  it("questions get ids q1, q2, ...; answers go back in OpenCode's order, a dismissal rejects", () => {
    const { pending, item } = questionItem({
      id: "que_1",
      sessionID: S,
      questions: [
        { question: "Colour?", header: "C", options: [{ label: "red", description: "" }] },
        { question: "Name?", header: "N", options: [] },
      ],
    });
    expect(item).toEqual({ kind: "user_input_request", requestId: "que_1", questions: [{ id: "q1", question: "Colour? (red)" }, { id: "q2", question: "Name?" }] });
    expect(answerFor(pending, { answers: { q2: "Ann", q1: ["red"] } })).toEqual({ kind: "question-reply", id: "que_1", answers: [["red"], ["Ann"]] });
    expect(answerFor(pending, { dismissed: true })).toEqual({ kind: "question-reject", id: "que_1" });
    expect(answerFor(pending, { decision: "accept" })).toBeNull();
  });
});
