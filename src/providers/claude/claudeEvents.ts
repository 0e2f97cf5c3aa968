import type { SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { FileChange, FileChangeKind, NormalizedProviderEvent, ProviderItem, TodoItem, TodoStatus, TurnEndStatus } from "../events.js";
import { limitEvent } from "../kit/limitSignals.js";
import { claudeMessageLimit, claudeResultLimit } from "./claudeLimits.js";

/**
 * Protocol mapping (STYLE rule 4): Claude Agent SDK messages to Loom's
 * normalized provider events. No I/O; the only state is the table of tool
 * calls waiting for their result, because a `tool_use` block (in an assistant
 * message) and its `tool_result` (in the next user message) arrive apart and
 * one item is made of both.
 *
 * - text → assistant_message; thinking → reasoning; an API error Claude Code
 *   reports as a synthetic assistant message → error
 * - tool_use + tool_result: Bash → command_execution, Write/Edit/MultiEdit/
 *   NotebookEdit → file_change, TodoWrite → todo_list, AskUserQuestion →
 *   nothing (the question is the user_input_request item), anything else
 *   (MCP tools `mcp__t3-code__…`, Read, Grep, …) → dynamic_tool. A failed
 *   file tool is a failed dynamic_tool: it changed nothing.
 * - result → usage (tokens, cache reads, the turn's share of the cost), then
 *   turn.completed (mapResult)
 * - api_retry, a refused plan limit (rate_limit_event), a failed result on a
 *   limit → limit (claudeLimits.ts; resultLimit for the result)
 *
 * Messages of subagents (`parent_tool_use_id` set) are left out: the
 * subagent's own tool call shows as one dynamic_tool.
 */

/** The head of a command's output kept in its item. */
export const OUTPUT_PREVIEW_CHARS = 2_000;

const SHELL_TOOLS = new Set(["Bash"]);
const FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);
const TODO_TOOL = "TodoWrite";
export const QUESTION_TOOL = "AskUserQuestion";

interface ToolUse {
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** When the assistant message that made the call was written (ISO), if known. */
  readonly startedAt: string | null;
}

export class ClaudeTranscriptMapper {
  private readonly toolUses = new Map<string, ToolUse>();
  /** Set once a plan limit refused this turn's request: its reset time, if told. */
  private planLimit: { readonly resetAt: string | null } | null = null;

  /** `cwd` is the session's working directory, reported with every command. */
  constructor(private readonly cwd: string) {}

  /** The events one SDK message yields. Result messages yield none here: see mapResult. */
  map(message: SDKMessage, runId: string): NormalizedProviderEvent[] {
    const limit = claudeMessageLimit(message);
    if (limit !== null) {
      if (limit.kind === "usage_limit") this.planLimit = { resetAt: limit.resetAt };
      return [limitEvent(runId, limit)];
    }
    if (message.type === "assistant") {
      if (message.parent_tool_use_id !== null) return [];
      const blocks = asArray(asRecord(message.message)?.content);
      const apiError = message.error !== undefined;
      const timestamp = asString((message as { timestamp?: unknown }).timestamp) ?? null;
      return blocks.flatMap((block, index) => this.assistantBlock(asRecord(block), `${message.uuid}:${index}`, runId, apiError, timestamp));
    }
    if (message.type === "user") {
      if (message.parent_tool_use_id !== null) return [];
      const content = asRecord(message.message)?.content;
      if (!Array.isArray(content)) return [];
      const timestamp = asString((message as { timestamp?: unknown }).timestamp) ?? null;
      const structured: unknown = (message as { tool_use_result?: unknown }).tool_use_result;
      const results = content.map(asRecord).filter((block) => block?.type === "tool_result");
      return results.flatMap((block) => this.toolResult(block ?? {}, results.length === 1 ? structured : undefined, runId, timestamp));
    }
    return [];
  }

  /** The input of a call still waiting for its result (a permission request may arrive with less). */
  pendingInput(toolUseId: string): Record<string, unknown> | undefined {
    return this.toolUses.get(toolUseId)?.input;
  }

  /**
   * The limit a result ends its turn on, unless a plan limit already said
   * so in this turn; the turn is over after it.
   */
  resultLimit(result: SDKResultMessage, runId: string): NormalizedProviderEvent[] {
    const planLimit = this.planLimit;
    this.planLimit = null;
    const limit = claudeResultLimit(result, planLimit?.resetAt ?? null);
    if (limit === null || (planLimit !== null && limit.kind === "usage_limit")) return [];
    return [limitEvent(runId, limit)];
  }

  /** Forget calls whose results never came (a turn cut short). */
  reset(): void {
    this.toolUses.clear();
    this.planLimit = null;
  }

  private assistantBlock(
    block: Record<string, unknown> | undefined,
    itemId: string,
    runId: string,
    apiError: boolean,
    timestamp: string | null,
  ): NormalizedProviderEvent[] {
    switch (block?.type) {
      case "text": {
        const text = asString(block.text) ?? "";
        if (text.trim() === "") return [];
        return [item(runId, itemId, apiError ? { kind: "error", message: text } : { kind: "assistant_message", text })];
      }
      case "thinking": {
        const text = asString(block.thinking) ?? "";
        return text.trim() === "" ? [] : [item(runId, itemId, { kind: "reasoning", text })];
      }
      case "tool_use": {
        const id = asString(block.id);
        const name = asString(block.name);
        if (id !== undefined && name !== undefined) {
          this.toolUses.set(id, { name, input: asRecord(block.input) ?? {}, startedAt: timestamp });
        }
        return [];
      }
      default:
        return [];
    }
  }

  private toolResult(block: Record<string, unknown>, structured: unknown, runId: string, timestamp: string | null): NormalizedProviderEvent[] {
    const id = asString(block.tool_use_id);
    if (id === undefined) return [];
    const use = this.toolUses.get(id);
    if (use === undefined) return [];
    this.toolUses.delete(id);
    const failed = block.is_error === true;
    const text = contentText(block.content);
    const mapped = toolItem(use, { failed, text, structured, cwd: this.cwd, durationMs: durationBetween(use.startedAt, timestamp) });
    return mapped === null ? [] : [item(runId, id, mapped)];
  }
}

interface ToolOutcome {
  readonly failed: boolean;
  /** The tool_result content as text (what the model read). */
  readonly text: string;
  /** The tool's structured output (`tool_use_result`), when the message carried one. */
  readonly structured: unknown;
  readonly cwd: string;
  readonly durationMs: number | null;
}

/** The item for a finished tool call, or null when it gets none. */
export function toolItem(use: { readonly name: string; readonly input: Record<string, unknown> }, outcome: ToolOutcome): ProviderItem | null {
  if (use.name === QUESTION_TOOL) return null;
  if (SHELL_TOOLS.has(use.name)) return commandItem(use.input, outcome);
  if (FILE_TOOLS.has(use.name) && !outcome.failed) return fileChangeItem(use.name, use.input, outcome.structured);
  if (use.name === TODO_TOOL && !outcome.failed) return todoItem(use.input);
  return {
    kind: "dynamic_tool",
    toolName: use.name,
    arguments: use.input,
    result: outcome.structured ?? outcome.text,
    status: outcome.failed ? "failed" : "completed",
  };
}

function commandItem(input: Record<string, unknown>, outcome: ToolOutcome): ProviderItem {
  const structured = asRecord(outcome.structured);
  const stdout = asString(structured?.stdout);
  const stderr = asString(structured?.stderr);
  const output = stdout !== undefined || stderr !== undefined ? [stdout ?? "", stderr ?? ""].filter((part) => part !== "").join("\n") : outcome.text;
  return {
    kind: "command_execution",
    command: asString(input.command) ?? "",
    cwd: outcome.cwd,
    exitCode: exitCodeOf(outcome, structured),
    outputPreview: output.slice(0, OUTPUT_PREVIEW_CHARS),
    outputTruncated: output.length > OUTPUT_PREVIEW_CHARS,
    durationMs: outcome.durationMs,
  };
}

/**
 * Claude Code reports no exit code for a command that succeeded; a failed one
 * reads "Exit code N" at the head of its result. A command that was denied,
 * interrupted or never ran has none.
 */
function exitCodeOf(outcome: ToolOutcome, structured: Record<string, unknown> | undefined): number | null {
  if (structured?.interrupted === true) return null;
  if (!outcome.failed) return 0;
  const match = /^Exit code (-?\d+)/.exec(outcome.text.trim());
  return match?.[1] === undefined ? null : Number(match[1]);
}

function fileChangeItem(toolName: string, input: Record<string, unknown>, structured: unknown): ProviderItem {
  const output = asRecord(structured);
  const path = asString(output?.filePath) ?? asString(input.file_path) ?? asString(input.notebook_path) ?? "";
  const kind: FileChangeKind = toolName === "Write" && output?.type === "create" ? "add" : "update";
  // A created file comes with an empty patch: all of its lines are additions.
  const counts = kind === "add" ? { additions: lineCount(asString(output?.content) ?? asString(input.content) ?? ""), deletions: 0 } : patchCounts(output?.structuredPatch);
  const change: FileChange = { path, kind, additions: counts.additions, deletions: counts.deletions };
  return { kind: "file_change", changes: [change] };
}

function patchCounts(patch: unknown): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const hunk of asArray(patch)) {
    for (const line of asArray(asRecord(hunk)?.lines)) {
      if (typeof line !== "string") continue;
      if (line.startsWith("+")) additions += 1;
      else if (line.startsWith("-")) deletions += 1;
    }
  }
  return { additions, deletions };
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function todoItem(input: Record<string, unknown>): ProviderItem {
  const items = asArray(input.todos).flatMap((value): TodoItem[] => {
    const todo = asRecord(value);
    const text = asString(todo?.content);
    return text === undefined ? [] : [{ text, status: todoStatus(todo?.status) }];
  });
  return { kind: "todo_list", items };
}

function todoStatus(value: unknown): TodoStatus {
  return value === "in_progress" || value === "completed" ? value : "pending";
}

export interface TurnOutcome {
  readonly status: TurnEndStatus;
  readonly error: string | null;
}

/** How a result message ends its turn. `interruptRequested`: Loom asked for the interrupt. */
export function turnOutcome(result: SDKResultMessage, interruptRequested: boolean): TurnOutcome {
  const aborted = result.terminal_reason === "aborted_streaming" || result.terminal_reason === "aborted_tools";
  if (interruptRequested || aborted) return { status: "interrupted", error: null };
  if (result.subtype === "success" && !result.is_error) return { status: "completed", error: null };
  if (result.subtype === "success") return { status: "failed", error: result.result.trim() === "" ? "Claude reported an error" : result.result };
  const errors = result.errors.filter((line) => !line.startsWith("[ede_diagnostic]"));
  return { status: "failed", error: errors.length > 0 ? errors.join("; ") : `Claude stopped: ${result.subtype}` };
}

/**
 * The events that end a turn: its use, then turn.completed. `usage` is the
 * turn's own (per turn in streaming-input sessions); input counts cache reads
 * and writes, `cachedInputTokens` the reads. `total_cost_usd` is the running
 * total of the whole query, so the turn's cost is its increase over
 * `costBeforeUsd`, the total the session last reported.
 */
export function mapResult(result: SDKResultMessage, runId: string, interruptRequested: boolean, costBeforeUsd = 0): NormalizedProviderEvent[] {
  const outcome = turnOutcome(result, interruptRequested);
  const usage = asRecord(result.usage);
  const cachedInputTokens = asNumber(usage?.cache_read_input_tokens);
  const totalCost = runningCostUsd(result);
  // A turn under an output schema ends on Claude Code's StructuredOutput tool, with no closing message: its checked value is the answer.
  const structured = result.subtype === "success" && result.structured_output !== undefined ? [item(runId, `claude-structured:${result.uuid}`, { kind: "assistant_message", text: JSON.stringify(result.structured_output) })] : [];
  return [
    ...structured,
    {
      type: "usage",
      runId,
      inputTokens: asNumber(usage?.input_tokens) + cachedInputTokens + asNumber(usage?.cache_creation_input_tokens),
      outputTokens: asNumber(usage?.output_tokens),
      cachedInputTokens,
      ...(totalCost === null ? {} : { costUsd: Math.max(0, totalCost - costBeforeUsd) }),
    },
    { type: "turn.completed", runId, status: outcome.status, error: outcome.error },
  ];
}

/** The query's running cost total a result reports, or null when it has none. */
export function runningCostUsd(result: SDKResultMessage): number | null {
  return Number.isFinite(result.total_cost_usd) ? result.total_cost_usd : null;
}

function item(runId: string, itemId: string, value: ProviderItem): NormalizedProviderEvent {
  return { type: "item.completed", runId, itemId, item: value };
}

/** A tool_result's content as the text the model read. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  return asArray(content)
    .flatMap((block) => {
      const record = asRecord(block);
      return record?.type === "text" && typeof record.text === "string" ? [record.text] : [];
    })
    .join("\n");
}

function durationBetween(start: string | null, end: string | null): number | null {
  if (start === null || end === null) return null;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function asNumber(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
