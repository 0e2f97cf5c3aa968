import type { SDKMessage } from "@cursor/sdk";
import type { NormalizedProviderEvent, ProviderItem, TodoItem } from "../events.js";

/**
 * The protocol-mapping concern of the cursor driver (pure): the SDK's run
 * stream messages become Loom's normalized events.
 *
 *   assistant text blocks       → assistant_message
 *   thinking                    → reasoning
 *   tool_call completed / error → command_execution (shell), file_change (edit, write, delete),
 *                                 todo_list (updateTodos), else dynamic_tool (mcp, read, ...)
 *   usage                       → usage, summed over the turn's model turns
 *
 * Loom's MCP tools reach the model through Cursor's `mcp` tool; its args
 * name the server and tool. Item ids: the SDK's call id for tools,
 * `<run id>-m<n>` for messages (stable for a replayed stream).
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;

type Json = Record<string, unknown>;

function asRecord(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

export class CursorEventMapper {
  private messages = 0;
  private usage = { input: 0, output: 0, cached: 0 };

  constructor(private readonly cwd: string) {}

  startTurn(): void {
    this.usage = { input: 0, output: 0, cached: 0 };
  }

  map(message: SDKMessage, runId: string): NormalizedProviderEvent[] {
    switch (message.type) {
      case "assistant": {
        const text = message.message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
        if (text.trim() === "") return [];
        return [{ type: "item.completed", runId, itemId: `${message.run_id}-m${++this.messages}`, item: { kind: "assistant_message", text } }];
      }
      case "thinking":
        if (message.text.trim() === "") return [];
        return [{ type: "item.completed", runId, itemId: `${message.run_id}-m${++this.messages}`, item: { kind: "reasoning", text: message.text } }];
      case "tool_call": {
        if (message.status === "running") return [];
        return [{ type: "item.completed", runId, itemId: message.call_id, item: toolItem(message.name, asRecord(message.args), message.result, message.status === "error", this.cwd) }];
      }
      case "usage": {
        this.usage.input += num(message.usage.inputTokens) + num(message.usage.cacheReadTokens) + num(message.usage.cacheWriteTokens);
        this.usage.output += num(message.usage.outputTokens);
        this.usage.cached += num(message.usage.cacheReadTokens);
        return [{ type: "usage", runId, inputTokens: this.usage.input, outputTokens: this.usage.output, cachedInputTokens: this.usage.cached }];
      }
      default:
        return [];
    }
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
}

export function toolItem(name: string, args: Json, result: unknown, failed: boolean, cwd: string): ProviderItem {
  const outcome = asRecord(result);
  const value = asRecord(outcome.value ?? outcome.success ?? outcome);
  switch (name) {
    case "shell": {
      const output = `${text(value.stdout)}${text(value.stderr)}` || (failed ? text(outcome.error ?? result) : "");
      return {
        kind: "command_execution",
        command: typeof args.command === "string" ? args.command : JSON.stringify(args),
        cwd: typeof args.workingDirectory === "string" ? args.workingDirectory : cwd,
        exitCode: typeof value.exitCode === "number" ? value.exitCode : null,
        outputPreview: output.slice(0, OUTPUT_PREVIEW_CHARS),
        outputTruncated: output.length > OUTPUT_PREVIEW_CHARS,
        durationMs: typeof value.executionTime === "number" ? value.executionTime : null,
      };
    }
    case "edit":
    case "write":
    case "delete":
      if (failed || typeof args.path !== "string") break;
      return {
        kind: "file_change",
        changes: [{ path: args.path, kind: name === "delete" ? "delete" : name === "write" ? "add" : "update", additions: num(value.linesAdded), deletions: num(value.linesRemoved) }],
      };
    case "updateTodos": {
      if (failed || !Array.isArray(args.todos)) break;
      const items = args.todos.flatMap((todo): TodoItem[] => {
        const entry = asRecord(todo);
        if (typeof entry.content !== "string") return [];
        return [{ text: entry.content, status: entry.status === "inProgress" ? "in_progress" : entry.status === "completed" || entry.status === "cancelled" ? "completed" : "pending" }];
      });
      return { kind: "todo_list", items };
    }
    default:
      break;
  }
  const toolName = name === "mcp" && typeof args.toolName === "string" ? `${typeof args.providerIdentifier === "string" ? args.providerIdentifier : "mcp"}.${args.toolName}` : name;
  return { kind: "dynamic_tool", toolName, arguments: name === "mcp" ? (args.args ?? {}) : args, result: result ?? null, status: failed ? "failed" : "completed" };
}
