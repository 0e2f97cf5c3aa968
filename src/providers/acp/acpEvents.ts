import type { AvailableCommand, ContentBlock, PlanEntry, PromptResponse, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, ToolKind } from "@agentclientprotocol/sdk/unstable";
import type { FileChange, NormalizedProviderEvent, ProviderItem, TodoStatus, TurnEndStatus } from "../events.js";

/**
 * The protocol-mapping concern of the ACP driver (STYLE rule 4): ACP
 * `session/update` notifications and the `session/prompt` response become
 * Loom's normalized provider events. No I/O; one mapper per turn.
 *
 *   agent_message_chunk  → item.delta, then one assistant_message when the message ends
 *   agent_thought_chunk  → item.delta, then one reasoning item
 *   tool_call (+ updates) → command_execution (kind execute), file_change (edit,
 *                           delete, move with diffs), dynamic_tool (every other kind,
 *                           MCP tools included), once the call is completed or failed
 *   plan                 → todo_list
 *   available_commands_update → system_notice (info) listing the agent's commands;
 *                           the session records a list once, not again while unchanged
 *
 * A message ends when anything else arrives or the turn ends. Item ids derive
 * from the run id and the order within the turn, or from the agent's own tool
 * call ids, so a replayed stream yields the same ids.
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;

interface OpenText {
  readonly itemId: string;
  readonly kind: "assistant_message" | "reasoning";
  text: string;
}

interface ToolState {
  title: string;
  name: string | null;
  kind: ToolKind | null;
  status: ToolCallStatus;
  rawInput: unknown;
  rawOutput: unknown;
  content: ToolCallContent[];
  locations: string[];
  emitted: boolean;
}

/** Which item a finished ACP tool call becomes (a table the compiler checks is total). */
const ITEM_OF_TOOL_KIND: { readonly [K in ToolKind]: "command_execution" | "file_change" | "dynamic_tool" } = {
  execute: "command_execution",
  edit: "file_change",
  delete: "file_change",
  move: "file_change",
  read: "dynamic_tool",
  search: "dynamic_tool",
  think: "dynamic_tool",
  fetch: "dynamic_tool",
  switch_mode: "dynamic_tool",
  other: "dynamic_tool",
};

/** How a prompt's stop reason ends the Loom turn. */
const TURN_END_OF_STOP_REASON: { readonly [K in StopReason]: TurnEndStatus } = {
  end_turn: "completed",
  max_tokens: "completed",
  max_turn_requests: "completed",
  refusal: "completed",
  cancelled: "interrupted",
};

const TODO_STATUS: { readonly [K in PlanEntry["status"]]: TodoStatus } = {
  pending: "pending",
  in_progress: "in_progress",
  completed: "completed",
};

/** At most this many commands are listed in one notice; the rest are counted. */
export const MAX_LISTED_COMMANDS = 50;

/**
 * The notice text for an agent's available commands: one line per command,
 * `/name <input hint> — description`, so a reader of the timeline (and a
 * model reading a transcript) knows what the agent offers.
 */
export function availableCommandsText(commands: readonly AvailableCommand[]): string {
  if (commands.length === 0) return "The agent offers no commands now.";
  const lines = commands.slice(0, MAX_LISTED_COMMANDS).map((command) => {
    const hint = command.input?.hint ? ` <${command.input.hint}>` : "";
    const description = command.description.trim() === "" ? "" : ` — ${command.description.trim()}`;
    return `/${command.name}${hint}${description}`;
  });
  const more = commands.length > MAX_LISTED_COMMANDS ? [`... and ${commands.length - MAX_LISTED_COMMANDS} more`] : [];
  return [`The agent offers ${commands.length} command${commands.length === 1 ? "" : "s"}:`, ...lines, ...more].join("\n");
}

export class AcpTurnMapper {
  private open: OpenText | null = null;
  private sequence = 0;
  private readonly tools = new Map<string, ToolState>();

  constructor(
    private readonly runId: string,
    /** The session's working directory: the cwd of a command that names none. */
    private readonly cwd: string,
  ) {}

  /** The events one session/update yields, in order. */
  map(update: SessionUpdate): NormalizedProviderEvent[] {
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        return this.text("assistant_message", update.content);
      case "agent_thought_chunk":
        return this.text("reasoning", update.content);
      case "tool_call": {
        const events = this.closeText();
        const state: ToolState = {
          title: update.title,
          name: update.name ?? null,
          kind: update.kind ?? null,
          status: update.status ?? "pending",
          rawInput: update.rawInput,
          rawOutput: update.rawOutput,
          content: update.content ?? [],
          locations: (update.locations ?? []).map((location) => location.path),
          emitted: false,
        };
        this.tools.set(update.toolCallId, state);
        return [...events, ...this.finishTool(update.toolCallId, state)];
      }
      case "tool_call_update": {
        const events = this.closeText();
        const state = this.tools.get(update.toolCallId) ?? newToolState(update.title ?? update.toolCallId);
        if (update.title != null) state.title = update.title;
        if (update.name != null) state.name = update.name;
        if (update.kind != null) state.kind = update.kind;
        if (update.status != null) state.status = update.status;
        if (update.rawInput !== undefined) state.rawInput = update.rawInput;
        if (update.rawOutput !== undefined) state.rawOutput = update.rawOutput;
        if (update.content != null) state.content = update.content;
        if (update.locations != null) state.locations = update.locations.map((location) => location.path);
        this.tools.set(update.toolCallId, state);
        return [...events, ...this.finishTool(update.toolCallId, state)];
      }
      case "plan": {
        const events = this.closeText();
        const item: ProviderItem = { kind: "todo_list", items: update.entries.map((entry) => ({ text: entry.content, status: TODO_STATUS[entry.status] })) };
        return [...events, { type: "item.completed", runId: this.runId, itemId: this.nextId("plan"), item }];
      }
      case "available_commands_update": {
        const events = this.closeText();
        const item: ProviderItem = { kind: "system_notice", level: "info", text: availableCommandsText(update.availableCommands) };
        return [...events, { type: "item.completed", runId: this.runId, itemId: this.nextId("commands"), item }];
      }
      default:
        // Modes, config options, titles, usage windows and the user's own
        // echoed message carry nothing Loom records per turn.
        return [];
    }
  }

  /**
   * The events that close the turn: open text, tool calls that never
   * finished (recorded as failed: the turn ended under them), token usage,
   * and turn.completed.
   */
  finish(outcome: { readonly response: PromptResponse } | { readonly failed: string } | { readonly interrupted: true }): NormalizedProviderEvent[] {
    const events = this.closeText();
    for (const [toolCallId, state] of this.tools) {
      if (state.emitted) continue;
      state.status = "failed";
      events.push(...this.finishTool(toolCallId, state));
    }
    if ("response" in outcome) {
      const usage = outcome.response.usage;
      if (usage != null) events.push({ type: "usage", runId: this.runId, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens });
      events.push({ type: "turn.completed", runId: this.runId, status: TURN_END_OF_STOP_REASON[outcome.response.stopReason], error: null });
    } else if ("failed" in outcome) {
      events.push({ type: "turn.completed", runId: this.runId, status: "failed", error: outcome.failed });
    } else {
      events.push({ type: "turn.completed", runId: this.runId, status: "interrupted", error: null });
    }
    return events;
  }

  /** The tool call a permission request is about, as the mapper knows it. */
  toolCall(toolCallId: string): { readonly title: string; readonly kind: ToolKind | null; readonly rawInput: unknown } | null {
    const state = this.tools.get(toolCallId);
    return state === undefined ? null : { title: state.title, kind: state.kind, rawInput: state.rawInput };
  }

  private text(kind: OpenText["kind"], content: ContentBlock): NormalizedProviderEvent[] {
    const text = blockText(content);
    const events = this.open !== null && this.open.kind !== kind ? this.closeText() : [];
    if (text === "") return events;
    this.open ??= { itemId: this.nextId(kind === "assistant_message" ? "message" : "reasoning"), kind, text: "" };
    this.open.text += text;
    events.push({ type: "item.delta", runId: this.runId, itemId: this.open.itemId, text });
    return events;
  }

  private closeText(): NormalizedProviderEvent[] {
    const open = this.open;
    this.open = null;
    if (open === null || open.text === "") return [];
    const item: ProviderItem = open.kind === "assistant_message" ? { kind: "assistant_message", text: open.text } : { kind: "reasoning", text: open.text };
    return [{ type: "item.completed", runId: this.runId, itemId: open.itemId, item }];
  }

  private finishTool(toolCallId: string, state: ToolState): NormalizedProviderEvent[] {
    if (state.emitted || (state.status !== "completed" && state.status !== "failed")) return [];
    state.emitted = true;
    return [{ type: "item.completed", runId: this.runId, itemId: `tool:${toolCallId}`, item: toolItem(state, this.cwd) }];
  }

  private nextId(what: string): string {
    this.sequence += 1;
    return `${this.runId}:${what}:${this.sequence}`;
  }
}

function newToolState(title: string): ToolState {
  return { title, name: null, kind: null, status: "pending", rawInput: undefined, rawOutput: undefined, content: [], locations: [], emitted: false };
}

/** A finished tool call as a Loom item. */
export function toolItem(state: Pick<ToolState, "title" | "name" | "kind" | "status" | "rawInput" | "rawOutput" | "content" | "locations">, cwd: string): ProviderItem {
  const target = ITEM_OF_TOOL_KIND[state.kind ?? "other"];
  if (target === "command_execution") {
    const output = toolOutputText(state.content, state.rawOutput);
    return {
      kind: "command_execution",
      command: commandText(state.rawInput) ?? state.title,
      cwd: stringField(state.rawInput, "cwd") ?? cwd,
      exitCode: exitCodeOf(state.rawOutput) ?? (state.status === "completed" ? 0 : null),
      outputPreview: output.slice(0, OUTPUT_PREVIEW_CHARS),
      outputTruncated: output.length > OUTPUT_PREVIEW_CHARS,
      durationMs: null,
    };
  }
  const changes = target === "file_change" && state.status === "completed" ? fileChanges(state) : [];
  if (changes.length > 0) return { kind: "file_change", changes };
  return {
    kind: "dynamic_tool",
    toolName: state.name ?? state.title,
    arguments: state.rawInput ?? null,
    result: state.rawOutput ?? (toolOutputText(state.content, undefined) || null),
    status: state.status === "completed" ? "completed" : "failed",
  };
}

function fileChanges(state: Pick<ToolState, "kind" | "content" | "locations">): FileChange[] {
  const diffs = state.content.flatMap((entry) => (entry.type === "diff" ? [entry] : []));
  if (diffs.length > 0) {
    return diffs.map((diff) => {
      const before = diff.oldText == null ? [] : lines(diff.oldText);
      const after = lines(diff.newText);
      const kind = diff.oldText == null ? "add" : state.kind === "delete" && diff.newText === "" ? "delete" : "update";
      const { additions, deletions } = lineDelta(before, after);
      return { path: diff.path, kind, additions, deletions };
    });
  }
  return state.locations.map((path) => ({ path, kind: state.kind === "delete" ? "delete" : "update", additions: 0, deletions: 0 }));
}

function lines(text: string): string[] {
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

/** Lines added and removed, by multiset difference: exact for appends and removals, close for edits. */
export function lineDelta(before: readonly string[], after: readonly string[]): { additions: number; deletions: number } {
  const remaining = new Map<string, number>();
  for (const line of before) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  let additions = 0;
  for (const line of after) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) remaining.set(line, count - 1);
    else additions += 1;
  }
  let deletions = 0;
  for (const count of remaining.values()) deletions += count;
  return { additions, deletions };
}

export function blockText(content: ContentBlock): string {
  switch (content.type) {
    case "text":
      return content.text;
    case "resource_link":
      return content.uri;
    case "resource":
      return "text" in content.resource ? content.resource.text : "";
    case "image":
    case "audio":
      return "";
    default:
      return "";
  }
}

function toolOutputText(content: readonly ToolCallContent[], rawOutput: unknown): string {
  const parts = content.flatMap((entry) => (entry.type === "content" ? [blockText(entry.content)] : []));
  const fromContent = parts.join("\n").trim();
  if (fromContent !== "") return fromContent;
  if (typeof rawOutput === "string") return rawOutput;
  return stringField(rawOutput, "output") ?? stringField(rawOutput, "stdout") ?? stringField(rawOutput, "formatted_output") ?? "";
}

function commandText(rawInput: unknown): string | null {
  const command = field(rawInput, "command");
  if (typeof command === "string") return command;
  if (Array.isArray(command) && command.every((part) => typeof part === "string")) return command.join(" ");
  return null;
}

function exitCodeOf(rawOutput: unknown): number | null {
  for (const key of ["exitCode", "exit_code", "code"]) {
    const value = field(rawOutput, key);
    if (typeof value === "number" && Number.isInteger(value)) return value;
  }
  return null;
}

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function stringField(value: unknown, key: string): string | null {
  const found = field(value, key);
  return typeof found === "string" ? found : null;
}
