import type { NormalizedProviderEvent, ProviderItem } from "../events.js";
import { limitEvent } from "../kit/limitSignals.js";
import { piErrorLimit, piRetryLimit } from "./piLimits.js";

/**
 * The protocol-mapping concern of the pi driver (pure): Pi's RPC events
 * (docs/rpc.md of @mariozechner/pi-coding-agent) become Loom's normalized
 * events.
 *
 *   message_update text/thinking delta → item.delta (streaming only)
 *   message_end of an assistant message → assistant_message per text block,
 *                                         reasoning per thinking block, usage
 *                                         (summed over the turn), error on stopReason "error"
 *   tool_execution_end                  → command_execution (bash), file_change (edit, write),
 *                                         else dynamic_tool (mcp__t3-code__*, read, grep, ...)
 *   auto_retry_start on a limit         → limit (Pi retries by itself)
 *   agent_end after a failed request    → limit, when the failure is one (piLimits.ts)
 *
 * Item ids are stable for the session: `m<n>-c<i>` for the n-th assistant
 * message's i-th block, the tool call id for a tool.
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;

type Json = Record<string, unknown>;

function asRecord(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

export interface TurnOutcome {
  /** "aborted" or "error" from the last assistant message, else null. */
  readonly stopReason: string | null;
  readonly error: string | null;
}

export class PiEventMapper {
  private messages = 0;
  private readonly toolArgs = new Map<string, { name: string; args: Json; started: number }>();
  private usage = { input: 0, output: 0, cached: 0, cost: 0 };
  private outcome: TurnOutcome = { stopReason: null, error: null };

  constructor(
    private readonly cwd: string,
    private readonly now: () => number = Date.now,
  ) {}

  startTurn(): void {
    this.usage = { input: 0, output: 0, cached: 0, cost: 0 };
    this.outcome = { stopReason: null, error: null };
  }

  /** How the turn's last model answer ended. */
  turnOutcome(): TurnOutcome {
    return this.outcome;
  }

  map(event: Json, runId: string): NormalizedProviderEvent[] {
    switch (event.type) {
      case "message_start":
        if (asRecord(event.message).role === "assistant") this.messages += 1;
        return [];
      case "message_update": {
        const update = asRecord(event.assistantMessageEvent);
        if ((update.type !== "text_delta" && update.type !== "thinking_delta") || typeof update.delta !== "string" || update.delta === "") return [];
        return [{ type: "item.delta", runId, itemId: `m${this.messages}-c${num(update.contentIndex)}`, text: update.delta }];
      }
      case "message_end":
        return this.messageEnd(asRecord(event.message), runId);
      case "auto_retry_start": {
        const limit = piRetryLimit(event);
        return limit === null ? [] : [limitEvent(runId, limit)];
      }
      case "agent_end": {
        const limit = this.outcome.stopReason === "error" && this.outcome.error !== null ? piErrorLimit(this.outcome.error, false, null) : null;
        return limit === null ? [] : [limitEvent(runId, limit)];
      }
      case "tool_execution_start":
        if (typeof event.toolCallId === "string") this.toolArgs.set(event.toolCallId, { name: String(event.toolName), args: asRecord(event.args), started: this.now() });
        return [];
      case "tool_execution_end": {
        if (typeof event.toolCallId !== "string") return [];
        const started = this.toolArgs.get(event.toolCallId);
        this.toolArgs.delete(event.toolCallId);
        const item = toolItem(String(event.toolName), started?.args ?? {}, asRecord(event.result), event.isError === true, this.cwd, started === undefined ? null : this.now() - started.started);
        return [{ type: "item.completed", runId, itemId: event.toolCallId, item }];
      }
      default:
        return [];
    }
  }

  private messageEnd(message: Json, runId: string): NormalizedProviderEvent[] {
    if (message.role !== "assistant") return [];
    const out: NormalizedProviderEvent[] = [];
    const content = Array.isArray(message.content) ? message.content : [];
    content.forEach((block, index) => {
      const part = asRecord(block);
      const itemId = `m${this.messages}-c${index}`;
      if (part.type === "text" && typeof part.text === "string" && part.text.trim() !== "") out.push({ type: "item.completed", runId, itemId, item: { kind: "assistant_message", text: part.text } });
      if (part.type === "thinking" && typeof part.thinking === "string" && part.thinking.trim() !== "") out.push({ type: "item.completed", runId, itemId, item: { kind: "reasoning", text: part.thinking } });
    });
    const stopReason = typeof message.stopReason === "string" ? message.stopReason : null;
    const error = typeof message.errorMessage === "string" && message.errorMessage !== "" ? message.errorMessage : null;
    this.outcome = { stopReason: stopReason === "aborted" || stopReason === "error" ? stopReason : null, error: stopReason === "error" ? (error ?? "the model request failed") : null };
    if (stopReason === "error") out.push({ type: "item.completed", runId, itemId: `m${this.messages}-error`, item: { kind: "error", message: this.outcome.error ?? "" } });
    const usage = asRecord(message.usage);
    if (Object.keys(usage).length > 0) {
      this.usage.input += num(usage.input) + num(usage.cacheRead) + num(usage.cacheWrite);
      this.usage.output += num(usage.output);
      this.usage.cached += num(usage.cacheRead);
      this.usage.cost += num(asRecord(usage.cost).total);
      const { input, output, cached, cost } = this.usage;
      out.push({ type: "usage", runId, inputTokens: Math.round(input), outputTokens: Math.round(output), cachedInputTokens: Math.round(cached), ...(cost > 0 ? { costUsd: cost } : {}) });
    }
    return out;
  }
}

function resultText(result: Json): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .map((part) => asRecord(part))
    .flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : []))
    .join("\n");
}

export function toolItem(name: string, args: Json, result: Json, isError: boolean, cwd: string, durationMs: number | null): ProviderItem {
  const text = resultText(result);
  if (name === "bash") {
    const code = /exit(?:ed)? (?:with )?code (\d+)/i.exec(text)?.[1];
    return {
      kind: "command_execution",
      command: typeof args.command === "string" ? args.command : JSON.stringify(args),
      cwd,
      exitCode: isError ? (code === undefined ? null : Number(code)) : 0,
      outputPreview: text.slice(0, OUTPUT_PREVIEW_CHARS),
      outputTruncated: text.length > OUTPUT_PREVIEW_CHARS,
      durationMs,
    };
  }
  if ((name === "edit" || name === "write") && !isError && typeof args.path === "string") {
    return { kind: "file_change", changes: [{ path: args.path, kind: name === "write" ? "add" : "update", additions: 0, deletions: 0 }] };
  }
  const details = result.details;
  const structured = typeof details === "object" && details !== null && Object.keys(details).length > 0;
  return { kind: "dynamic_tool", toolName: name, arguments: args, result: structured ? details : text, status: isError ? "failed" : "completed" };
}
