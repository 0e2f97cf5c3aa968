import { Attr } from "../traces/spanAttributes.js";
import type { TraceSpan, TreeTrace } from "../traces/spanModel.js";

/**
 * `loom trace` as text: the tree's spans as an indented waterfall, one line
 * per span (name, a bar placing it in the trace's time, duration, status,
 * tokens, cost), children below their parent in start order.
 */

const BAR_WIDTH = 32;
const NAME_WIDTH = 44;

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** Spans in waterfall order with their depth: a span whose parent is not in the trace stands at the top. */
export function waterfallOrder(spans: readonly TraceSpan[]): { readonly span: TraceSpan; readonly depth: number }[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | null, TraceSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanId !== null && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const ordered: { span: TraceSpan; depth: number }[] = [];
  const visit = (parent: string | null, depth: number) => {
    const below = [...(children.get(parent) ?? [])].sort((a, b) => a.startTimeMs - b.startTimeMs || a.spanId.localeCompare(b.spanId));
    for (const span of below) {
      ordered.push({ span, depth });
      visit(span.spanId, depth + 1);
    }
  };
  visit(null, 0);
  return ordered;
}

function bar(span: TraceSpan, start: number, total: number, now: number): string {
  const end = span.endTimeMs ?? now;
  const from = Math.min(BAR_WIDTH - 1, Math.floor(((span.startTimeMs - start) / total) * BAR_WIDTH));
  const length = Math.max(1, Math.round(((end - span.startTimeMs) / total) * BAR_WIDTH));
  const cells = Array.from({ length: BAR_WIDTH }, (_, index) => (index >= from && index < from + length ? (span.endTimeMs === null ? "░" : "█") : " "));
  return cells.join("");
}

function statusText(span: TraceSpan): string {
  if (span.endTimeMs === null) return "running";
  if (span.status.code === "error") return `error${span.status.message === undefined ? "" : `: ${span.status.message}`}`;
  return span.status.code;
}

function usageText(span: TraceSpan): string {
  const input = span.attributes[Attr.inputTokens];
  const output = span.attributes[Attr.outputTokens];
  const cost = span.attributes[Attr.costUsd];
  const parts: string[] = [];
  if (typeof input === "number" && typeof output === "number") parts.push(`${input}→${output} tok`);
  if (typeof cost === "number" && cost > 0) parts.push(`$${cost.toFixed(4)}`);
  return parts.join("  ");
}

export function formatWaterfall(trace: TreeTrace, now: number = Date.now()): string {
  if (trace.spans.length === 0) return `trace ${trace.traceId} (root ${trace.rootThreadId}): no spans yet\n`;
  const start = Math.min(...trace.spans.map((span) => span.startTimeMs));
  const end = Math.max(...trace.spans.map((span) => span.endTimeMs ?? now));
  const total = Math.max(1, end - start);
  const lines = waterfallOrder(trace.spans).map(({ span, depth }) => {
    const name = `${"  ".repeat(depth)}${span.name}`;
    const shown = name.length > NAME_WIDTH ? `${name.slice(0, NAME_WIDTH - 1)}…` : name.padEnd(NAME_WIDTH);
    const duration = seconds((span.endTimeMs ?? now) - span.startTimeMs).padStart(9);
    return `${shown} |${bar(span, start, total, now)}| ${duration}  ${statusText(span)}${usageText(span) === "" ? "" : `  ${usageText(span)}`}`.trimEnd();
  });
  return `trace ${trace.traceId} (root ${trace.rootThreadId}): ${trace.spans.length} span${trace.spans.length === 1 ? "" : "s"}, ${seconds(total)}\n${lines.join("\n")}\n`;
}
