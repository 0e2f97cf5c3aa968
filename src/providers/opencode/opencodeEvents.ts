import type { Event, Part, ToolPart } from "@opencode-ai/sdk/v2";
import type { FileChange, NormalizedProviderEvent, ProviderItem, TodoItem } from "../events.js";
import { limitEvent } from "../kit/limitSignals.js";
import { opencodeErrorLimit, opencodeRetryLimit } from "./opencodeLimits.js";

/**
 * The protocol-mapping concern of the opencode driver (pure): OpenCode's
 * server events for one OpenCode session become Loom's normalized events.
 *
 *   text part, finished            → assistant_message (user prompt parts are skipped)
 *   reasoning part, finished       → reasoning
 *   tool part, completed or error  → command_execution (bash), file_change (edit, write),
 *                                    todo_list (todowrite), else dynamic_tool (MCP tools
 *                                    `t3-code_<tool>`, read, grep, question, ...)
 *   message.part.delta             → item.delta (streaming only)
 *   step-finish part               → usage, summed over the turn's model steps
 *   session.error (not an abort)   → error, and limit when it is one (opencodeLimits.ts)
 *   session.status retry on a limit → limit (OpenCode retries by itself)
 *
 * It also keeps the facts the session needs to end a turn: which user
 * messages arrived during the turn and whether each got a finished answer.
 * Permission and question requests are the approvals concern (requests.ts).
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;

interface AssistantFacts {
  readonly parentID: string;
  completed: boolean;
  error: string | null;
}

interface StepTokens {
  readonly input: number;
  readonly output: number;
  readonly cached: number;
  readonly cost: number;
}

export class OpencodeEventMapper {
  private readonly roles = new Map<string, "user" | "assistant">();
  private readonly assistants = new Map<string, AssistantFacts>();
  /** Parts already emitted as items (tool parts are updated many times). */
  private readonly emitted = new Set<string>();
  private readonly steps = new Map<string, StepTokens>();
  private turnUsers: string[] = [];
  private turnError: string | null = null;

  constructor(
    private readonly cwd: string,
    /** The clock a retry's next attempt is measured from. */
    private readonly now: () => number = Date.now,
  ) {}

  /** A new turn: its user messages, usage and error start empty. */
  startTurn(): void {
    this.turnUsers = [];
    this.steps.clear();
    this.turnError = null;
  }

  /** The id of the turn's first user message (OpenCode's turn id), once seen. */
  firstUserMessageId(): string | undefined {
    return this.turnUsers[0];
  }

  userMessagesSeen(): number {
    return this.turnUsers.length;
  }

  /** Every user message of the turn has a finished assistant answer. */
  allAnswered(): boolean {
    return this.turnUsers.every((user) => [...this.assistants.values()].some((facts) => facts.parentID === user && facts.completed));
  }

  /** The turn's provider error (session.error or a failed answer), or null. */
  error(): string | null {
    return this.turnError;
  }

  /** Normalized events for one native event of this session (already filtered by session id). */
  map(event: Event, runId: string): NormalizedProviderEvent[] {
    switch (event.type) {
      case "message.updated": {
        const info = event.properties.info;
        const known = this.roles.has(info.id);
        this.roles.set(info.id, info.role);
        if (info.role === "user") {
          if (!known) this.turnUsers.push(info.id);
          return [];
        }
        const facts = this.assistants.get(info.id) ?? { parentID: info.parentID, completed: false, error: null };
        facts.completed = info.time.completed !== undefined || info.error !== undefined;
        facts.error = info.error === undefined || info.error.name === "MessageAbortedError" ? null : errorText(info.error);
        this.assistants.set(info.id, facts);
        if (facts.error !== null) this.turnError = facts.error;
        return [];
      }
      case "message.part.updated":
        return this.mapPart(event.properties.part, runId);
      case "message.part.delta": {
        const { messageID, partID, field, delta } = event.properties;
        if (field !== "text" || this.roles.get(messageID) === "user" || delta === "") return [];
        return [{ type: "item.delta", runId, itemId: partID, text: delta }];
      }
      case "session.error": {
        const error = event.properties.error;
        if (error === undefined || error.name === "MessageAbortedError") return [];
        const message = errorText(error);
        this.turnError = message;
        const limit = opencodeErrorLimit(error, this.now());
        return [{ type: "item.completed", runId, itemId: `error-${event.id}`, item: { kind: "error", message } }, ...(limit === null ? [] : [limitEvent(runId, limit)])];
      }
      case "session.status": {
        const { status } = event.properties;
        const limit = status.type === "retry" ? opencodeRetryLimit(status, this.now()) : null;
        return limit === null ? [] : [limitEvent(runId, limit)];
      }
      default:
        return [];
    }
  }

  private mapPart(part: Part, runId: string): NormalizedProviderEvent[] {
    if (this.roles.get(part.messageID) === "user") return [];
    switch (part.type) {
      case "text":
        if (part.time?.end === undefined || part.synthetic === true || part.text.trim() === "") return [];
        return this.once(part.id, runId, { kind: "assistant_message", text: part.text });
      case "reasoning":
        if (part.time.end === undefined || part.text.trim() === "") return [];
        return this.once(part.id, runId, { kind: "reasoning", text: part.text });
      case "tool": {
        const item = toolItem(part, this.cwd);
        return item === null ? [] : this.once(part.id, runId, item);
      }
      case "step-finish": {
        this.steps.set(part.id, { input: part.tokens.input + part.tokens.cache.read, output: part.tokens.output + part.tokens.reasoning, cached: part.tokens.cache.read, cost: part.cost });
        return [this.usage(runId)];
      }
      default:
        return [];
    }
  }

  private once(partId: string, runId: string, item: ProviderItem): NormalizedProviderEvent[] {
    if (this.emitted.has(partId)) return [];
    this.emitted.add(partId);
    return [{ type: "item.completed", runId, itemId: partId, item }];
  }

  /** Usage so far in the turn: every model step's tokens, summed. */
  private usage(runId: string): NormalizedProviderEvent {
    let input = 0;
    let output = 0;
    let cached = 0;
    let cost = 0;
    for (const step of this.steps.values()) {
      input += step.input;
      output += step.output;
      cached += step.cached;
      cost += step.cost;
    }
    return { type: "usage", runId, inputTokens: input, outputTokens: output, cachedInputTokens: cached, ...(cost > 0 ? { costUsd: cost } : {}) };
  }
}

/** The item of a finished tool part, or null while it runs. */
export function toolItem(part: ToolPart, cwd: string): ProviderItem | null {
  const state = part.state;
  if (state.status !== "completed" && state.status !== "error") return null;
  const input = state.input;
  const failed = state.status === "error";
  const output = state.status === "completed" ? state.output : state.error;
  const metadata = state.metadata ?? {};
  switch (part.tool) {
    case "bash": {
      const exit = metadata.exit;
      return {
        kind: "command_execution",
        command: typeof input.command === "string" ? input.command : JSON.stringify(input),
        cwd: typeof input.workdir === "string" ? input.workdir : cwd,
        exitCode: typeof exit === "number" ? exit : null,
        outputPreview: output.slice(0, OUTPUT_PREVIEW_CHARS),
        outputTruncated: output.length > OUTPUT_PREVIEW_CHARS || metadata.truncated === true,
        durationMs: state.time.end - state.time.start,
      };
    }
    case "edit":
    case "write": {
      if (failed) break;
      const change = fileChange(part.tool, input, metadata);
      return change === null ? null : { kind: "file_change", changes: [change] };
    }
    case "todowrite": {
      if (failed || !Array.isArray(input.todos)) break;
      return { kind: "todo_list", items: input.todos.flatMap(todoItem) };
    }
    default:
      break;
  }
  return { kind: "dynamic_tool", toolName: part.tool, arguments: input, result: output, status: failed ? "failed" : "completed" };
}

function fileChange(tool: "edit" | "write", input: Record<string, unknown>, metadata: Record<string, unknown>): FileChange | null {
  const path = typeof input.filePath === "string" ? input.filePath : null;
  if (path === null) return null;
  const diff = typeof metadata.filediff === "object" && metadata.filediff !== null ? (metadata.filediff as Record<string, unknown>) : {};
  const count = (value: unknown): number => (typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : 0);
  const kind = tool === "write" && metadata.exists !== true ? "add" : "update";
  return { path, kind, additions: count(diff.additions), deletions: count(diff.deletions) };
}

function todoItem(todo: unknown): TodoItem[] {
  if (typeof todo !== "object" || todo === null) return [];
  const { content, status } = todo as Record<string, unknown>;
  if (typeof content !== "string") return [];
  const mapped = status === "in_progress" ? "in_progress" : status === "completed" || status === "cancelled" ? "completed" : "pending";
  return [{ text: content, status: mapped }];
}

function errorText(error: { readonly name: string; readonly data?: unknown }): string {
  const data = error.data as { message?: unknown } | undefined;
  return typeof data?.message === "string" && data.message !== "" ? `${error.name}: ${data.message}` : error.name;
}
