import { describe, expect, it } from "vitest";
import type { NormalizedProviderEvent, ProviderItem } from "../events.js";
import { ClaudeTranscriptMapper, contentText, mapResult, toolItem, turnOutcome } from "./claudeEvents.js";
import { type ClaudeFixture, loadFixture, resultOf } from "./testing/fixtures.js";

/** Replays a recorded transcript through the mapper, as the session does. */
function replay(fixture: ClaudeFixture, interruptRequested = false): NormalizedProviderEvent[] {
  const mapper = new ClaudeTranscriptMapper(fixture.cwd);
  const events: NormalizedProviderEvent[] = [];
  for (const message of fixture.messages) {
    if (message.type === "result") events.push(...mapResult(message, "run-1", interruptRequested));
    else events.push(...mapper.map(message, "run-1"));
  }
  return events;
}

function items(events: readonly NormalizedProviderEvent[]): ProviderItem[] {
  return events.flatMap((event) => (event.type === "item.completed" ? [event.item] : []));
}

function end(events: readonly NormalizedProviderEvent[]): NormalizedProviderEvent | undefined {
  return events.at(-1);
}

describe("claudeEvents: recorded transcripts", () => {
  it("an MCP tool call is a dynamic_tool with the structured result, then the quoting reply", () => {
    const fixture = loadFixture("mcp-thread-list");
    const events = replay(fixture);
    const [tool, reply] = items(events);
    expect(tool).toMatchObject({ kind: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_list", arguments: { limit: 5 }, status: "completed" });
    if (tool?.kind !== "dynamic_tool") throw new Error("no tool item");
    const result = tool.result as { structuredContent: { threads: { title: string }[] } };
    expect(result.structuredContent.threads.map((thread) => thread.title)).toContain("an existing thread");
    expect(reply).toMatchObject({ kind: "assistant_message" });
    if (reply?.kind !== "assistant_message") throw new Error("no reply");
    expect(reply.text).toMatch(/^threads: \{"projectId":null,"threads":\[/);
    expect(end(events)).toEqual({ type: "turn.completed", runId: "run-1", status: "completed", error: null });
  });

  it("the tool item's id is the tool_use id; a text item's is the SDK message uuid and block index", () => {
    const fixture = loadFixture("mcp-thread-list");
    const ids = replay(fixture).flatMap((event) => (event.type === "item.completed" ? [event.itemId] : []));
    const reply = fixture.messages.findLast((message) => message.type === "assistant");
    expect(ids).toEqual(["call_1", `${reply?.uuid}:0`]);
  });

  it("an approved command is a command_execution with exit code 0, output and duration", () => {
    const events = replay(loadFixture("bash-approved"));
    const [command, reply] = items(events);
    expect(command).toMatchObject({ kind: "command_execution", command: "echo hi", exitCode: 0, outputPreview: "hi", outputTruncated: false });
    if (command?.kind !== "command_execution") throw new Error("no command");
    expect(command.cwd).toMatch(/loom-claude-rec-/);
    expect(command.durationMs).toBeGreaterThanOrEqual(0);
    expect(reply).toEqual({ kind: "assistant_message", text: "done" });
  });

  it("a failing command keeps its exit code and its stderr", () => {
    const [command] = items(replay(loadFixture("bash-failed")));
    expect(command).toMatchObject({ kind: "command_execution", command: "echo oops >&2; exit 3", exitCode: 3 });
    if (command?.kind !== "command_execution") throw new Error("no command");
    expect(command.outputPreview).toContain("oops");
  });

  it("a declined command never ran: no exit code, the denial as its output", () => {
    const events = replay(loadFixture("bash-declined"));
    expect(items(events)[0]).toMatchObject({ kind: "command_execution", command: "touch made.txt", exitCode: null, outputPreview: "The user declined this tool call." });
    expect(end(events)).toMatchObject({ type: "turn.completed", status: "completed" });
  });

  it("Write then Edit are file changes: an add with its lines, an update with the patch counts", () => {
    const fixture = loadFixture("write-edit");
    const [write, edit, reply] = items(replay(fixture));
    expect(write).toEqual({ kind: "file_change", changes: [{ path: `${fixture.cwd}/notes.txt`, kind: "add", additions: 2, deletions: 0 }] });
    expect(edit).toEqual({ kind: "file_change", changes: [{ path: `${fixture.cwd}/notes.txt`, kind: "update", additions: 2, deletions: 1 }] });
    expect(reply).toEqual({ kind: "assistant_message", text: "edited" });
  });

  it("TodoWrite is a todo_list", () => {
    const [todos] = items(replay(loadFixture("todo")));
    expect(todos).toEqual({
      kind: "todo_list",
      items: [
        { text: "read the code", status: "completed" },
        { text: "fix the bug", status: "in_progress" },
        { text: "write a test", status: "pending" },
      ],
    });
  });

  it("AskUserQuestion yields no tool item (the question is the request item); the reply follows", () => {
    const texts = items(replay(loadFixture("ask-user")));
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatchObject({ kind: "assistant_message" });
    if (texts[0]?.kind !== "assistant_message") throw new Error("no reply");
    expect(texts[0].text).toContain('"Which color?"="blue"');
  });

  it("thinking is reasoning, then the text", () => {
    expect(items(replay(loadFixture("thinking")))).toEqual([
      { kind: "reasoning", text: "pondering" },
      { kind: "assistant_message", text: "hello back" },
    ]);
  });

  it("an API error is an error item and fails the turn with Claude's message", () => {
    const events = replay(loadFixture("api-error"));
    expect(items(events)).toEqual([{ kind: "error", message: "API Error: 400 boom 400" }]);
    expect(end(events)).toEqual({ type: "turn.completed", runId: "run-1", status: "failed", error: "API Error: 400 boom 400" });
  });

  it("an interrupted turn ends interrupted, with the cut-short command and no diagnostic as error", () => {
    const fixture = loadFixture("interrupted");
    const events = replay(fixture);
    expect(items(events)).toEqual([expect.objectContaining({ kind: "command_execution", command: "sleep 5", exitCode: null })]);
    expect(end(events)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    expect(turnOutcome(resultOf(fixture), false).status).toBe("interrupted");
  });

  it("a steered turn ends once, after answering both messages", () => {
    const fixture = loadFixture("steered");
    const events = replay(fixture);
    expect(events.filter((event) => event.type === "turn.completed")).toHaveLength(1);
    expect(resultOf(fixture).user_message_uuids).toHaveLength(2);
  });

  it("every turn reports usage before it ends: tokens, cache reads and the recorded cost", () => {
    const events = replay(loadFixture("bash-approved"));
    expect(events.at(-2)).toEqual({ type: "usage", runId: "run-1", inputTokens: 64654, outputTokens: 13, cachedInputTokens: 0, costUsd: 0.19415700000000002 });
    expect(replay(loadFixture("write-edit")).at(-2)).toEqual({ type: "usage", runId: "run-1", inputTokens: 97261, outputTokens: 45, cachedInputTokens: 0, costUsd: 0.292458 });
  });

  it("input counts cache reads and writes, cachedInputTokens the reads; the cost counts from the total already reported", () => {
    const recorded = resultOf(loadFixture("bash-approved"));
    const cached = { ...recorded, usage: { ...recorded.usage, input_tokens: 100, cache_read_input_tokens: 4_000, cache_creation_input_tokens: 500, output_tokens: 20 }, total_cost_usd: 0.5 };
    expect(mapResult(cached, "run-2", false, 0.2)[0]).toEqual({ type: "usage", runId: "run-2", inputTokens: 4_600, outputTokens: 20, cachedInputTokens: 4_000, costUsd: 0.3 });
    // A zeroed total (a crash result) is no negative cost.
    expect(mapResult({ ...cached, total_cost_usd: 0 }, "run-2", false, 0.2)[0]).toMatchObject({ costUsd: 0 });
  });

  it("ignores system messages, subagent messages and results it never saw a call for", () => {
    const mapper = new ClaudeTranscriptMapper("/w");
    const init = loadFixture("bash-approved").messages.find((message) => message.type === "system");
    expect(mapper.map(init!, "run-1")).toEqual([]);
    const sub = { type: "assistant", parent_tool_use_id: "toolu_x", uuid: "u", message: { content: [{ type: "text", text: "inside" }] } };
    expect(mapper.map(sub as never, "run-1")).toEqual([]);
    const orphan = { type: "user", parent_tool_use_id: null, message: { role: "user", content: [{ type: "tool_result", tool_use_id: "nope", content: "x" }] } };
    expect(mapper.map(orphan as never, "run-1")).toEqual([]);
  });
});

describe("claudeEvents: pieces", () => {
  it("a failed file tool is a failed dynamic_tool, not a change", () => {
    expect(toolItem({ name: "Edit", input: { file_path: "/a" } }, { failed: true, text: "String not found", structured: undefined, cwd: "/", durationMs: null })).toEqual({
      kind: "dynamic_tool",
      toolName: "Edit",
      arguments: { file_path: "/a" },
      result: "String not found",
      status: "failed",
    });
  });

  it("truncates long command output", () => {
    const long = "x".repeat(5_000);
    const item = toolItem({ name: "Bash", input: { command: "yes" } }, { failed: false, text: long, structured: { stdout: long, stderr: "" }, cwd: "/", durationMs: 5 });
    expect(item).toMatchObject({ kind: "command_execution", outputTruncated: true, exitCode: 0, durationMs: 5 });
    if (item?.kind !== "command_execution") throw new Error("no command");
    expect(item.outputPreview).toHaveLength(2_000);
  });

  it("reads tool_result content given as text blocks", () => {
    expect(contentText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }])).toBe("a\nb");
  });

  it("an error result without text fails with its subtype", () => {
    const result = { ...resultOf(loadFixture("bash-approved")), subtype: "error_max_turns", is_error: true, errors: [], terminal_reason: "max_turns" };
    expect(turnOutcome(result as never, false)).toEqual({ status: "failed", error: "Claude stopped: error_max_turns" });
  });
});
