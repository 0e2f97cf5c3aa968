import type { SDKMessage } from "@cursor/sdk";
import { describe, expect, it } from "vitest";
import { CursorEventMapper, OUTPUT_PREVIEW_CHARS, toolItem } from "./cursorEvents.js";

/** The cursor driver's mapping of the SDK's run stream messages (shapes from @cursor/sdk's published types) onto Loom's events. */

const base = { agent_id: "agent-1", run_id: "run-1" } as const;

function tool(name: string, status: "running" | "completed" | "error", args: unknown, result?: unknown): SDKMessage {
  return { type: "tool_call", ...base, call_id: `call-${name}`, name, status, args, ...(result === undefined ? {} : { result }) };
}

describe("CursorEventMapper", () => {
  it("maps assistant text and thinking to items with stable ids, and skips empty ones", () => {
    const mapper = new CursorEventMapper("/work");
    const assistant: SDKMessage = { type: "assistant", ...base, message: { role: "assistant", content: [{ type: "text", text: "Hello " }, { type: "text", text: "there" }] } };
    expect(mapper.map(assistant, "r1")).toEqual([{ type: "item.completed", runId: "r1", itemId: "run-1-m1", item: { kind: "assistant_message", text: "Hello there" } }]);
    expect(mapper.map({ type: "thinking", ...base, text: "pondering" }, "r1")).toEqual([{ type: "item.completed", runId: "r1", itemId: "run-1-m2", item: { kind: "reasoning", text: "pondering" } }]);
    expect(mapper.map({ type: "thinking", ...base, text: "  " }, "r1")).toEqual([]);
    expect(mapper.map({ type: "status", ...base, status: "RUNNING" }, "r1")).toEqual([]);
  });

  it("records a tool call once it ends, not while it runs; Loom's MCP tools become dynamic_tool items named server.tool", () => {
    const mapper = new CursorEventMapper("/work");
    const args = { providerIdentifier: "t3-code", toolName: "t3_thread_list", args: { limit: 5 } };
    expect(mapper.map(tool("mcp", "running", args), "r1")).toEqual([]);
    expect(mapper.map(tool("mcp", "completed", args, { threads: [] }), "r1")).toEqual([
      { type: "item.completed", runId: "r1", itemId: "call-mcp", item: { kind: "dynamic_tool", toolName: "t3-code.t3_thread_list", arguments: { limit: 5 }, result: { threads: [] }, status: "completed" } },
    ]);
    expect(mapper.map(tool("read", "error", { path: "a.ts" }, { error: "missing" }), "r1")[0]).toMatchObject({ item: { kind: "dynamic_tool", toolName: "read", status: "failed" } });
  });

  it("sums usage over the turn's model turns and starts again with the next turn", () => {
    const mapper = new CursorEventMapper("/work");
    const usage = (input: number, output: number, cacheRead: number): SDKMessage =>
      ({ type: "usage", ...base, usage: { inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: 1, totalTokens: 0 } });
    mapper.startTurn();
    mapper.map(usage(10, 2, 4), "r1");
    expect(mapper.map(usage(5, 3, 0), "r1")).toEqual([{ type: "usage", runId: "r1", inputTokens: 10 + 4 + 1 + 5 + 1, outputTokens: 5, cachedInputTokens: 4 }]);
    mapper.startTurn();
    expect(mapper.map(usage(1, 1, 0), "r2")).toEqual([{ type: "usage", runId: "r2", inputTokens: 2, outputTokens: 1, cachedInputTokens: 0 }]);
  });
});

describe("toolItem", () => {
  it("shell is a command_execution with output, exit code and duration; long output is truncated", () => {
    expect(toolItem("shell", { command: "ls", workingDirectory: "/work/sub" }, { success: { stdout: "a\n", stderr: "", exitCode: 0, executionTime: 12 } }, false, "/work")).toEqual({
      kind: "command_execution",
      command: "ls",
      cwd: "/work/sub",
      exitCode: 0,
      outputPreview: "a\n",
      outputTruncated: false,
      durationMs: 12,
    });
    const long = toolItem("shell", { command: "yes" }, { value: { stdout: "y".repeat(OUTPUT_PREVIEW_CHARS + 10), exitCode: 1 } }, false, "/work");
    expect(long).toMatchObject({ cwd: "/work", exitCode: 1, outputTruncated: true });
    expect(long.kind === "command_execution" && long.outputPreview.length).toBe(OUTPUT_PREVIEW_CHARS);
  });

  it("edit, write and delete are file changes; a failed one is a failed dynamic_tool", () => {
    expect(toolItem("edit", { path: "a.ts" }, { success: { linesAdded: 3, linesRemoved: 1 } }, false, "/work")).toEqual({ kind: "file_change", changes: [{ path: "a.ts", kind: "update", additions: 3, deletions: 1 }] });
    expect(toolItem("write", { path: "b.ts" }, { success: { linesAdded: 2 } }, false, "/work")).toMatchObject({ changes: [{ path: "b.ts", kind: "add", additions: 2, deletions: 0 }] });
    expect(toolItem("delete", { path: "c.ts" }, {}, false, "/work")).toMatchObject({ changes: [{ path: "c.ts", kind: "delete" }] });
    expect(toolItem("edit", { path: "a.ts" }, { error: "no match" }, true, "/work")).toMatchObject({ kind: "dynamic_tool", toolName: "edit", status: "failed" });
  });

  it("updateTodos is a todo_list with Loom's statuses", () => {
    const todos = [
      { content: "plan", status: "completed" },
      { content: "build", status: "inProgress" },
      { content: "ship", status: "pending" },
      { content: "drop", status: "cancelled" },
      { status: "pending" },
    ];
    expect(toolItem("updateTodos", { todos }, {}, false, "/work")).toEqual({
      kind: "todo_list",
      items: [
        { text: "plan", status: "completed" },
        { text: "build", status: "in_progress" },
        { text: "ship", status: "pending" },
        { text: "drop", status: "completed" },
      ],
    });
  });
});
