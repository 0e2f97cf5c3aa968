import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { NormalizedProviderEvent } from "../events.js";
import { CodexEventMapper, fileChange, mapItem, turnCompleted } from "./codexEvents.js";
import type { ServerNotification, ThreadItem, Turn } from "./protocol.js";

/**
 * The mapper against transcripts recorded from the real codex 0.171.0
 * (fixtures/, see recordFixtures.record.test.ts). Every notification of a
 * transcript goes through one mapper, as in a session.
 */

interface Fixture {
  readonly messages: readonly { readonly id?: unknown; readonly method: string; readonly params: unknown }[];
}

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", `${name}.json`), "utf8")) as Fixture;
}

function replay(name: string): NormalizedProviderEvent[] {
  const mapper = new CodexEventMapper();
  return fixture(name)
    .messages.filter((message) => message.id === undefined)
    .flatMap((message) => mapper.map(message as ServerNotification, "run-1"));
}

/** The events Loom records: no deltas, no usage. */
function durable(events: readonly NormalizedProviderEvent[]): NormalizedProviderEvent[] {
  return events.filter((event) => event.type !== "item.delta" && event.type !== "usage");
}

describe("codex notifications → normalized events (recorded transcripts)", () => {
  it("MCP tool calls: <server>.<tool> dynamic_tool items, then the assistant message", () => {
    const events = durable(replay("mcp-tool-calls"));
    expect(events.map((event) => event.type)).toEqual(["turn.started", "item.completed", "item.completed", "item.completed", "turn.completed"]);
    const [, list, wait, message, end] = events;
    expect(list).toMatchObject({ itemId: "call_1", item: { kind: "dynamic_tool", toolName: "t3-code.t3_thread_list", arguments: { limit: 5 }, status: "completed" } });
    expect(JSON.stringify(list)).toContain('"title":"a busy thread"');
    expect(wait).toMatchObject({ itemId: "call_2", item: { kind: "dynamic_tool", toolName: "t3-code-direct.t3_thread_wait", status: "completed" } });
    expect(message).toMatchObject({ item: { kind: "assistant_message" } });
    expect(message?.type === "item.completed" && message.item.kind === "assistant_message" ? message.item.text : "").toMatch(/^waited: /);
    expect(end).toEqual({ type: "turn.completed", runId: "run-1", status: "completed", error: null });
  });

  it("streams agent message deltas under the message's item id", () => {
    const events = replay("mcp-tool-calls");
    const deltas = events.filter((event) => event.type === "item.delta");
    const message = events.find((event) => event.type === "item.completed" && event.item.kind === "assistant_message");
    expect(deltas.length).toBeGreaterThan(1);
    if (message?.type !== "item.completed" || message.item.kind !== "assistant_message") throw new Error("no message");
    expect(deltas.every((delta) => delta.itemId === message.itemId)).toBe(true);
    expect(deltas.map((delta) => (delta.type === "item.delta" ? delta.text : "")).join("")).toBe(message.item.text);
  });

  it("usage counts from the start of the turn and only grows", () => {
    const usage = replay("mcp-tool-calls").filter((event) => event.type === "usage");
    expect(usage.length).toBe(3);
    const inputs = usage.map((event) => (event.type === "usage" ? event.inputTokens : 0));
    expect(inputs).toEqual([...inputs].sort((a, b) => a - b));
    expect(usage.at(-1)).toEqual({ type: "usage", runId: "run-1", inputTokens: 44738, outputTokens: 97, cachedInputTokens: 0 });
    expect(usage.every((event) => event.type === "usage" && event.costUsd === undefined)).toBe(true);
  });

  it("turn.started carries codex's thread id and turn id, as turn/started reported them", () => {
    for (const name of ["mcp-tool-calls", "command-approved", "file-change-approved", "steered", "failed", "user-input"]) {
      const messages = fixture(name).messages;
      const started = messages.find((message) => message.method === "turn/started")?.params as { threadId: string; turn: { id: string } };
      const thread = (messages.find((message) => message.method === "thread/started")?.params as { thread: { id: string } }).thread.id;
      const completed = (messages.findLast((message) => message.method === "turn/completed")?.params as { turn: { id: string } }).turn.id;
      // The ids are the thread's and the turn's, as the rest of the transcript names them.
      expect(started.threadId).toBe(thread);
      expect(started.turn.id).toBe(completed);
      expect(replay(name)[0]).toEqual({ type: "turn.started", runId: "run-1", nativeThreadId: thread, nativeTurnId: completed });
    }
    expect(replay("steered")[0]).toEqual({
      type: "turn.started",
      runId: "run-1",
      nativeThreadId: "01a22c49-d3d8-7842-a58c-d9a3f4ee7745",
      nativeTurnId: "01a22c49-d3ef-7260-babc-2012278a9628",
    });
  });

  it("usage (cached input included) of a second turn starts from the first turn's totals", () => {
    const mapper = new CodexEventMapper();
    const turn = (id: string): Turn => ({ id, rootTurnId: id, items: [], itemsView: "notLoaded", status: "inProgress", error: null, startedAt: null, completedAt: null, durationMs: null });
    const tokens = (input: number, output: number, cached: number) => ({ totalTokens: input + output, inputTokens: input, cachedInputTokens: cached, cacheWriteInputTokens: 0, outputTokens: output, reasoningOutputTokens: 0 });
    const usage = (turnId: string, input: number, output: number, cached = 0): ServerNotification => ({
      method: "thread/tokenUsage/updated",
      params: { threadId: "t", turnId, tokenUsage: { total: tokens(input, output, cached), last: tokens(input, output, cached), modelContextWindow: null } },
    });
    expect(mapper.map({ method: "turn/started", params: { threadId: "t", turn: turn("a") } }, "run-1")).toEqual([{ type: "turn.started", runId: "run-1", nativeThreadId: "t", nativeTurnId: "a" }]);
    expect(mapper.map(usage("a", 100, 10, 40), "run-1")).toEqual([{ type: "usage", runId: "run-1", inputTokens: 100, outputTokens: 10, cachedInputTokens: 40 }]);
    mapper.map({ method: "turn/started", params: { threadId: "t", turn: turn("b") } }, "run-2");
    expect(mapper.map(usage("b", 250, 15, 140), "run-2")).toEqual([{ type: "usage", runId: "run-2", inputTokens: 150, outputTokens: 5, cachedInputTokens: 100 }]);
  });

  it("an approved command: command_execution with its exit code and output", () => {
    const events = durable(replay("command-approved"));
    const command = events.find((event) => event.type === "item.completed" && event.item.kind === "command_execution");
    expect(command).toMatchObject({
      itemId: "call_3",
      item: { kind: "command_execution", command: "/bin/bash -lc 'echo hi > out.txt && cat out.txt'", cwd: "/workspace", exitCode: 0, outputTruncated: false, durationMs: 228 },
    });
    expect(command?.type === "item.completed" && command.item.kind === "command_execution" ? command.item.outputPreview : "").toMatch(/hi\n$/);
    expect(events.at(-1)).toMatchObject({ type: "turn.completed", status: "completed" });
    // Its live output, while it runs, carries the command line item/started told.
    const output = replay("command-approved").filter((event) => event.type === "item.output");
    expect(output.length).toBeGreaterThan(0);
    expect(output.every((event) => event.type === "item.output" && event.itemId === "call_3" && event.command === "/bin/bash -lc 'echo hi > out.txt && cat out.txt'")).toBe(true);
  });

  it("a declined command has no exit code (Loom shows it failed)", () => {
    const command = replay("command-declined").find((event) => event.type === "item.completed" && event.item.kind === "command_execution");
    expect(command).toMatchObject({ item: { kind: "command_execution", command: "/bin/bash -lc 'touch nope.txt'", exitCode: null, outputPreview: "declined" } });
  });

  it("an approved patch: file_change with the added file and its line count", () => {
    const change = replay("file-change-approved").find((event) => event.type === "item.completed" && event.item.kind === "file_change");
    expect(change).toEqual({
      type: "item.completed",
      runId: "run-1",
      itemId: "call_5",
      item: { kind: "file_change", changes: [{ path: "/workspace/notes.txt", kind: "add", additions: 2, deletions: 0 }] },
    });
  });

  it("an interrupted turn ends interrupted, with no item for the unfinished tool call", () => {
    const events = durable(replay("interrupted"));
    expect(events).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: "01a22c49-8a43-7322-9482-da947e931c3b", nativeTurnId: "01a22c49-8a57-7060-abdb-c4b645061af6" },
      { type: "turn.completed", runId: "run-1", status: "interrupted", error: null },
    ]);
  });

  it("a steered turn: the steered user message is not an item; the answer follows the tool call", () => {
    const events = durable(replay("steered"));
    const kinds = events.map((event) => (event.type === "item.completed" ? event.item.kind : event.type));
    expect(kinds).toEqual(["turn.started", "dynamic_tool", "assistant_message", "turn.completed"]);
    expect(events[2]).toMatchObject({ item: { text: "noted: also say bye" } });
  });

  it("a failed turn: an error item, then turn.completed failed with codex's message", () => {
    const events = durable(replay("failed"));
    expect(events.map((event) => event.type)).toEqual(["turn.started", "item.completed", "turn.completed"]);
    expect(events[1]).toMatchObject({ item: { kind: "error" } });
    expect(events[1]?.type === "item.completed" && events[1].item.kind === "error" ? events[1].item.message : "").toContain("404 Not Found");
    expect(events[2]).toMatchObject({ type: "turn.completed", status: "failed" });
    expect(events[2]?.type === "turn.completed" ? events[2].error : "").toContain("unexpected status 404 Not Found");
  });

  it("keeps started items for the approvals that follow them, until they complete", () => {
    const mapper = new CodexEventMapper();
    const messages = fixture("file-change-approved").messages;
    const requestIndex = messages.findIndex((message) => message.method === "item/fileChange/requestApproval");
    for (const message of messages.slice(0, requestIndex)) if (message.id === undefined) mapper.map(message as ServerNotification, "run-1");
    expect(mapper.startedItem("call_5")).toMatchObject({ type: "fileChange", status: "inProgress" });
    for (const message of messages.slice(requestIndex + 1)) if (message.id === undefined) mapper.map(message as ServerNotification, "run-1");
    expect(mapper.startedItem("call_5")).toBeUndefined();
  });
});

describe("codex items and plans (constructed from the generated types)", () => {
  it("a plan update is one todo_list per turn, updated in place", () => {
    const mapper = new CodexEventMapper();
    const plan = (statuses: readonly ("pending" | "inProgress" | "completed")[]): ServerNotification => ({
      method: "turn/plan/updated",
      params: { threadId: "t", turnId: "turn-1", explanation: null, plan: statuses.map((status, index) => ({ step: `step ${index + 1}`, status })) },
    });
    const first = mapper.map(plan(["inProgress", "pending"]), "run-1");
    const second = mapper.map(plan(["completed", "inProgress"]), "run-1");
    expect(first).toEqual([
      { type: "item.completed", runId: "run-1", itemId: "plan-turn-1", item: { kind: "todo_list", items: [{ text: "step 1", status: "in_progress" }, { text: "step 2", status: "pending" }] } },
    ]);
    expect(second[0]).toMatchObject({ itemId: "plan-turn-1", item: { items: [{ status: "completed" }, { status: "in_progress" }] } });
  });

  it("reasoning uses the summary, else the raw content; empty reasoning is dropped", () => {
    const reasoning = (summary: string[], content: string[]): ThreadItem => ({ type: "reasoning", id: "r", summary, content });
    expect(mapItem(reasoning(["short"], ["long"]))).toEqual({ kind: "reasoning", text: "short" });
    expect(mapItem(reasoning([], ["a", "b"]))).toEqual({ kind: "reasoning", text: "a\n\nb" });
    expect(mapItem(reasoning([], []))).toBeNull();
  });

  it("a failed MCP call carries its error as the result", () => {
    const item: ThreadItem = {
      type: "mcpToolCall",
      id: "c",
      server: "t3-code",
      environmentId: null,
      tool: "delegate_task",
      status: "failed",
      arguments: { task: "x" },
      appContext: null,
      mcpAppUi: null,
      pluginId: null,
      readOnlyHint: null,
      result: null,
      error: { message: "tool call timed out" },
      durationMs: 5,
    };
    expect(mapItem(item)).toEqual({ kind: "dynamic_tool", toolName: "t3-code.delegate_task", arguments: { task: "x" }, result: { error: "tool call timed out" }, status: "failed" });
  });

  it("counts the lines of an update diff, not its headers", () => {
    const diff = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n same\n";
    expect(fileChange({ path: "x", kind: { type: "update", move_path: null }, diff })).toEqual({ path: "x", kind: "update", additions: 2, deletions: 1 });
    expect(fileChange({ path: "y", kind: { type: "delete" }, diff: "a\nb\n" })).toEqual({ path: "y", kind: "delete", additions: 0, deletions: 2 });
  });

  it("a declined file change is an error item, not a change", () => {
    const mapper = new CodexEventMapper();
    const events = mapper.map(
      { method: "item/completed", params: { threadId: "t", turnId: "u", completedAtMs: 0, item: { type: "fileChange", id: "p", changes: [{ path: "/w/a.txt", kind: { type: "add" }, diff: "x\n" }], status: "declined" } } },
      "run-1",
    );
    expect(events).toEqual([{ type: "item.completed", runId: "run-1", itemId: "p", item: { kind: "error", message: "file change declined: /w/a.txt" } }]);
  });

  it("turn.completed carries an error exactly when the turn failed", () => {
    const turn: Omit<Turn, "status" | "error"> = { id: "u", rootTurnId: null, items: [], itemsView: "notLoaded", startedAt: null, completedAt: null, durationMs: null };
    expect(turnCompleted({ ...turn, status: "completed", error: null }, "r")).toEqual({ type: "turn.completed", runId: "r", status: "completed", error: null });
    expect(turnCompleted({ ...turn, status: "failed", error: null }, "r")).toEqual({ type: "turn.completed", runId: "r", status: "failed", error: "codex ended the turn with status failed" });
    expect(turnCompleted({ ...turn, status: "interrupted", error: null }, "r")).toMatchObject({ status: "interrupted", error: null });
  });
});
