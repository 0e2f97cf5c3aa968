import type { TurnItem, TurnItemOf } from "../contracts/turnItems.js";
import { Attr, Operation } from "./spanAttributes.js";
import { spanIdOf } from "./spanIds.js";
import { type SpanAttributeValue, SpanKind, SpanSource, type SpanStatus, SpanStatusCode, type TraceSpan } from "./spanModel.js";
import { attrs, span, time } from "./spanParts.js";
import { type TraceState, childPlacement } from "./treeContext.js";

/** The turn items that are tool calls: one `execute_tool` span each. */
export const TOOL_ITEM_TYPES = ["command_execution", "file_change", "file_search", "web_search", "dynamic_tool"] as const;
export type ToolItemType = (typeof TOOL_ITEM_TYPES)[number];

interface ToolFacts {
  readonly name: string;
  /** gen_ai.tool.type: `function` runs in the agent, `extension` behind an MCP server. */
  readonly type: "function" | "extension";
  /** Null while the call is in progress. */
  readonly outcome: "completed" | "failed" | "declined" | null;
  /** How long the call ran, when the agent reported it; the span then starts that long before the item was recorded. */
  readonly durationMs: number | null;
  readonly extra: Readonly<Record<string, SpanAttributeValue | null>>;
}

const ended = (status: "in_progress" | "completed" | "failed" | "declined") => (status === "in_progress" ? null : status);

/**
 * Each tool item type's facts (compiler-checked total). Agents report most
 * tool calls once they are done, so a span's start is its item's creation
 * less the duration the agent reported, or the creation itself (a span of
 * no length) when it reported none.
 */
const TOOL_FACTS: { readonly [K in ToolItemType]: (item: TurnItemOf<K>) => ToolFacts } = {
  command_execution: (item) => ({ name: "shell", type: "function", outcome: ended(item.status), durationMs: item.durationMs, extra: { [Attr.exitCode]: item.exitCode } }),
  file_change: (item) => ({ name: "file_change", type: "function", outcome: ended(item.status), durationMs: null, extra: {} }),
  file_search: () => ({ name: "file_search", type: "function", outcome: "completed", durationMs: null, extra: {} }),
  web_search: () => ({ name: "web_search", type: "function", outcome: "completed", durationMs: null, extra: {} }),
  dynamic_tool: (item) => ({ name: item.toolName, type: item.toolName.startsWith("mcp__") ? "extension" : "function", outcome: ended(item.status), durationMs: null, extra: {} }),
};

export function isToolItem(item: TurnItem): item is TurnItemOf<ToolItemType> {
  return (TOOL_ITEM_TYPES as readonly string[]).includes(item.type);
}

function factsOf(item: TurnItemOf<ToolItemType>): ToolFacts {
  return (TOOL_FACTS[item.type] as (item: TurnItemOf<ToolItemType>) => ToolFacts)(item);
}

/** `execute_tool <name>` under its run's span; null for an item outside a run. */
export function toolSpan(state: TraceState, item: TurnItemOf<ToolItemType>): TraceSpan | null {
  if (item.runId === null) return null;
  const facts = factsOf(item);
  const recorded = time(item.createdAt);
  const status: SpanStatus = facts.outcome === "failed" ? { code: SpanStatusCode.error, message: `${facts.name} failed` } : facts.outcome === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset };
  return span(childPlacement(state, item.threadId, spanIdOf(item.runId)), {
    name: `${Operation.executeTool} ${facts.name}`,
    kind: SpanKind.internal,
    source: SpanSource.tool,
    entityId: item.id,
    startTimeMs: recorded - (facts.durationMs ?? 0),
    endTimeMs: facts.outcome === null ? null : facts.durationMs === null ? time(item.updatedAt) : recorded,
    status,
    attributes: attrs({
      [Attr.operationName]: Operation.executeTool,
      [Attr.toolName]: facts.name,
      [Attr.toolType]: facts.type,
      [Attr.toolCallId]: item.id,
      [Attr.threadId]: item.threadId,
      [Attr.runId]: item.runId,
      [Attr.itemId]: item.id,
      [Attr.itemType]: item.type,
      [Attr.toolStatus]: facts.outcome ?? "in_progress",
      [Attr.errorType]: facts.outcome === "failed" ? "tool_failed" : null,
      ...facts.extra,
    }),
  });
}
