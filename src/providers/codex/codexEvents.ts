import type { FileChange, FileChangeKind, NormalizedProviderEvent, ProviderItem, TodoStatus, TurnEndStatus } from "../events.js";
import { limitEvent } from "../kit/limitSignals.js";
import { codexErrorLimit, codexRateLimitsLimit } from "./codexLimits.js";
import type { FileUpdateChange, ServerNotification, ThreadItem, Turn } from "./protocol.js";

/**
 * The protocol-mapping concern of the codex driver (STYLE rule 4): codex
 * app-server notifications in, Loom's normalized provider events out. No
 * I/O; the only state is what a mapping needs from earlier notifications
 * (token totals, items started but not finished, error counts, the turns
 * that signalled a limit and the account's reset time; codexLimits.ts), so
 * a recorded transcript always maps to the same events.
 *
 * The session decides which run a notification belongs to and passes its
 * runId; notifications of other threads never reach the mapper.
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;

interface Tokens {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

const NO_TOKENS: Tokens = { input: 0, cached: 0, output: 0 };

export class CodexEventMapper {
  /** Thread-wide token totals as last reported. */
  private total: Tokens = NO_TOKENS;
  /** The totals when each turn started: usage events count from there. */
  private readonly turnBase = new Map<string, Tokens>();
  private readonly started = new Map<string, ThreadItem>();
  private readonly errorCounts = new Map<string, number>();
  /** Turns that already signalled a limit: their failed turn/completed repeats it. */
  private readonly limitedTurns = new Set<string>();
  /** When the account's reached limit resets, from the latest account/rateLimits/updated. */
  private resetAt: string | null = null;

  /** An item codex announced (item/started) and has not completed yet: approvals read its details. */
  startedItem(itemId: string): ThreadItem | undefined {
    return this.started.get(itemId);
  }

  map(notification: ServerNotification, runId: string): NormalizedProviderEvent[] {
    switch (notification.method) {
      case "turn/started": {
        const { threadId, turn } = notification.params;
        this.turnBase.set(turn.id, this.total);
        return [{ type: "turn.started", runId, nativeThreadId: threadId, nativeTurnId: turn.id }];
      }
      case "item/started":
        this.started.set(notification.params.item.id, notification.params.item);
        return [];
      case "item/completed": {
        const { item } = notification.params;
        this.started.delete(item.id);
        const mapped = mapItem(item);
        if (mapped !== null) return [{ type: "item.completed", runId, itemId: item.id, item: mapped }];
        return declinedItem(item, runId);
      }
      case "item/agentMessage/delta":
        return [{ type: "item.delta", runId, itemId: notification.params.itemId, text: notification.params.delta }];
      case "item/commandExecution/outputDelta": {
        // Live only: the command item completes with its own aggregated output. The started item tells the command line.
        const { itemId, delta } = notification.params;
        const started = this.started.get(itemId);
        return [{ type: "item.output", runId, itemId, text: delta, ...(started?.type === "commandExecution" ? { command: started.command } : {}) }];
      }
      case "turn/plan/updated": {
        const { turnId, plan } = notification.params;
        // One list per turn, updated in place (Loom upserts items by id).
        const items = plan.map((step) => ({ text: step.step, status: todoStatus(step.status) }));
        return [{ type: "item.completed", runId, itemId: `plan-${turnId}`, item: { kind: "todo_list", items } }];
      }
      case "thread/tokenUsage/updated": {
        const { turnId, tokenUsage } = notification.params;
        this.total = { input: tokenUsage.total.inputTokens, cached: tokenUsage.total.cachedInputTokens, output: tokenUsage.total.outputTokens };
        const base = this.turnBase.get(turnId) ?? NO_TOKENS;
        // Codex reports no cost.
        return [
          {
            type: "usage",
            runId,
            inputTokens: this.total.input - base.input,
            outputTokens: this.total.output - base.output,
            cachedInputTokens: this.total.cached - base.cached,
          },
        ];
      }
      case "error": {
        const { error, turnId, willRetry } = notification.params;
        const count = (this.errorCounts.get(turnId) ?? 0) + 1;
        this.errorCounts.set(turnId, count);
        const detail = error.additionalDetails === null ? "" : ` (${error.additionalDetails})`;
        const message = `${error.message}${detail}${willRetry ? "; codex is retrying" : ""}`;
        const events: NormalizedProviderEvent[] = [{ type: "item.completed", runId, itemId: `error-${turnId}-${count}`, item: { kind: "error", message } }];
        const limit = codexErrorLimit(error, willRetry, this.resetAt);
        if (limit !== null) {
          if (!willRetry) this.limitedTurns.add(turnId);
          events.push(limitEvent(runId, limit));
        }
        return events;
      }
      case "account/rateLimits/updated": {
        const limit = codexRateLimitsLimit(notification.params.rateLimits);
        this.resetAt = limit?.resetAt ?? null;
        return limit === null ? [] : [limitEvent(runId, limit)];
      }
      case "turn/completed": {
        const { turn } = notification.params;
        this.turnBase.delete(turn.id);
        this.errorCounts.delete(turn.id);
        const signalled = this.limitedTurns.delete(turn.id);
        const limit = turn.status === "failed" && turn.error !== null && !signalled ? codexErrorLimit(turn.error, false, this.resetAt) : null;
        return [...(limit === null ? [] : [limitEvent(runId, limit)]), turnCompleted(turn, runId)];
      }
      default:
        return [];
    }
  }
}

/** The one event that ends a turn; `error` is set exactly when it failed. */
export function turnCompleted(turn: Turn, runId: string): NormalizedProviderEvent {
  const status: TurnEndStatus = turn.status === "completed" ? "completed" : turn.status === "interrupted" ? "interrupted" : "failed";
  const error = status === "failed" ? (turn.error?.message ?? `codex ended the turn with status ${turn.status}`) : null;
  return { type: "turn.completed", runId, status, error };
}

/** A finished codex item as a Loom item; null for items Loom has no kind for (user messages, web searches, ...). */
export function mapItem(item: ThreadItem): ProviderItem | null {
  switch (item.type) {
    case "agentMessage":
      return { kind: "assistant_message", text: item.text };
    case "plan":
      // A proposed plan (plan mode) is the turn's answer: show it as the assistant's text.
      return { kind: "assistant_message", text: item.text };
    case "reasoning": {
      const text = (item.summary.length > 0 ? item.summary : item.content).join("\n\n");
      return text === "" ? null : { kind: "reasoning", text };
    }
    case "commandExecution": {
      const output = item.aggregatedOutput ?? (item.status === "declined" ? "declined" : "");
      return {
        kind: "command_execution",
        command: item.command,
        cwd: item.cwd,
        exitCode: item.status === "declined" ? null : item.exitCode,
        outputPreview: output.slice(0, OUTPUT_PREVIEW_CHARS),
        outputTruncated: output.length > OUTPUT_PREVIEW_CHARS,
        durationMs: item.durationMs,
      };
    }
    case "fileChange":
      return item.status === "completed" ? { kind: "file_change", changes: item.changes.map(fileChange) } : null;
    case "mcpToolCall": {
      const failed = item.status === "failed" || item.error !== null;
      return {
        kind: "dynamic_tool",
        // Codex names a call <server>.<tool>; Loom's tools come from "t3-code" or "t3-code-direct".
        toolName: `${item.server}.${item.tool}`,
        arguments: item.arguments,
        result: item.error === null ? item.result : { error: item.error.message },
        status: failed ? "failed" : "completed",
      };
    }
    case "dynamicToolCall":
      return {
        kind: "dynamic_tool",
        toolName: item.namespace === null ? item.tool : `${item.namespace}.${item.tool}`,
        arguments: item.arguments,
        result: item.contentItems,
        status: item.status === "failed" || item.success === false ? "failed" : "completed",
      };
    default:
      return null;
  }
}

/** A file change that was declined or failed is not a change: report it as an error item. */
function declinedItem(item: ThreadItem, runId: string): NormalizedProviderEvent[] {
  if (item.type !== "fileChange" || item.status === "completed" || item.status === "inProgress") return [];
  const paths = item.changes.map((change) => change.path).join(", ");
  return [{ type: "item.completed", runId, itemId: item.id, item: { kind: "error", message: `file change ${item.status}: ${paths || "(no files)"}` } }];
}

export function fileChange(change: FileUpdateChange): FileChange {
  const kind: FileChangeKind = change.kind.type;
  const lines = change.diff === "" ? [] : change.diff.replace(/\n$/, "").split("\n");
  switch (kind) {
    case "add":
      // An added file's diff is its content.
      return { path: change.path, kind, additions: lines.length, deletions: 0 };
    case "delete":
      return { path: change.path, kind, additions: 0, deletions: lines.length };
    case "update":
      return {
        path: change.path,
        kind,
        additions: lines.filter((line) => line.startsWith("+") && !line.startsWith("+++")).length,
        deletions: lines.filter((line) => line.startsWith("-") && !line.startsWith("---")).length,
      };
  }
}

function todoStatus(status: "pending" | "inProgress" | "completed"): TodoStatus {
  return status === "inProgress" ? "in_progress" : status;
}
