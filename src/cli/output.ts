import { formatBudget } from "./budgetOutput.js";
import type { ItemView, RunSummary, ThreadLaunchResult, ThreadListResult, ThreadReadResult, ThreadSendResult, ThreadWaitResult } from "./results.js";

/**
 * How `loom threads` shows results to a person. Pure: every function returns
 * the text, ending with a newline; the command decides where it goes.
 * --json output bypasses all of this (formatJson).
 */

export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? "" : `${prefix}${line}`))
    .join("\n");
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join("  ")).join("\n");
}

/** `loom threads list`: one row per thread, newest first, and where the next page starts. */
export function formatThreadList(result: ThreadListResult, options: { readonly parents?: boolean } = {}): string {
  if (result.threads.length === 0) return result.total === 0 ? "no threads\n" : `no threads at offset ${result.offset} (${result.total} in all)\n`;
  const row = (t: ThreadListResult["threads"][number]): string[] => {
    const cells = [t.threadId, t.status, t.providerInstanceId ?? "-", t.updatedAt.replace("T", " ").slice(0, 19)];
    if (options.parents === true) cells.push(t.parentThreadId === null ? "-" : `${t.parentThreadId} (${t.relation})`);
    return [...cells, oneLine(t.title, 60)];
  };
  const heading = options.parents === true ? ["THREAD", "STATUS", "PROVIDER", "UPDATED", "PARENT", "TITLE"] : ["THREAD", "STATUS", "PROVIDER", "UPDATED", "TITLE"];
  const rows = [heading, ...result.threads.map(row)];
  const first = result.offset + 1;
  const last = result.offset + result.threads.length;
  const footer = `threads ${first}-${last} of ${result.total}${result.nextOffset === null ? "" : `; next page: --offset ${result.nextOffset}`}`;
  return `${table(rows)}\n${footer}\n`;
}

/**
 * Who a message's line names: the person, another agent (a parent's brief to
 * its child), or Loom itself (a scheduled fire, a re-sent message).
 */
export const MESSAGE_AUTHOR_LABELS: { readonly [author: string]: string } = { user: "user", agent: "agent", system: "system" };

/** The label of a user message by who wrote it; "user" when the read does not say. */
export function messageAuthor(createdBy: string | null | undefined): string {
  return MESSAGE_AUTHOR_LABELS[createdBy ?? "user"] ?? "user";
}

function itemLabel(item: ItemView): string {
  const status = "status" in item && typeof item.status === "string" ? ` (${item.status})` : "";
  // Approvals and questions name their request, so `loom requests respond ID` can answer them.
  const request = item.requestId === undefined ? "" : ` [${item.requestId}]`;
  switch (item.type) {
    case "user_message":
      return messageAuthor(item.createdBy);
    case "assistant_message":
      return "assistant";
    case "proposed_plan":
      return "plan";
    case "notification":
      return `notice${item.title === null || item.title === undefined ? "" : ` "${item.title}"`}`;
    default:
      return `${item.type}${status}${request}`;
  }
}

function runHeading(runId: string | null, runs: readonly RunSummary[]): string {
  if (runId === null) return "── outside any run ──";
  const run = runs.find((r) => r.runId === runId);
  if (run === undefined) return `── run ${runId} ──`;
  return `── run #${run.ordinal} · ${run.status}${run.error === null ? "" : ` · ${oneLine(run.error, 80)}`} ──`;
}

/** `loom threads read`: a heading for the thread, then the items grouped by run. */
export function formatTranscript(read: ThreadReadResult, lineage: readonly string[] = []): string {
  const t = read.thread;
  const lines = [
    t.title,
    `thread ${t.threadId} · ${t.status} · ${t.providerInstanceId ?? "no provider"}${t.model === null ? "" : ` (${t.model})`} · project ${t.projectId}`,
    ...lineage,
    ...(read.budget === undefined ? [] : formatBudget(read.budget)),
  ];
  if (read.items.length === 0) lines.push("", read.view === "messages" ? "(no messages)" : "(no activity)");
  let currentRun: string | null | undefined;
  for (const item of read.items) {
    if (item.runId !== currentRun) {
      currentRun = item.runId;
      lines.push("", runHeading(item.runId, read.runs));
    }
    lines.push("", `${itemLabel(item)}:`, indent(item.text, "  ") + (item.truncated ? " …(truncated)" : ""));
  }
  return `${lines.join("\n")}\n`;
}

/** Several pages of one read as one result: the items of all, the rest from the last. */
export function mergeReadPages(pages: readonly ThreadReadResult[]): ThreadReadResult {
  const first = pages[0]!;
  const last = pages[pages.length - 1]!;
  return {
    ...last,
    items: pages.flatMap((page) => page.items),
    earlierPosition: first.earlierPosition,
    truncated: pages.some((page) => page.truncated),
  };
}

export function formatLaunch(result: ThreadLaunchResult): string {
  const provider = `${result.providerInstanceId}${result.model === null ? "" : ` (${result.model})`}`;
  const run = result.runId === null ? "no run" : `run ${result.runId} ${result.status}`;
  return `launched ${result.threadId} "${oneLine(result.title, 60)}" on ${provider} in project ${result.projectId}: ${run}\n`;
}

export function formatSend(result: ThreadSendResult): string {
  const run = result.runId === null ? "" : ` (run ${result.runId}${result.runStatus === null ? "" : `, ${result.runStatus}`})`;
  return `sent to ${result.threadId}: ${result.delivery}${run}\n`;
}

/** `loom threads wait`: the run's end (or where it stands), then its result text. */
export function formatWait(result: ThreadWaitResult): string {
  if (result.runId === null) return `thread ${result.threadId} has no runs\n`;
  const head = result.waitTimedOut ? `run ${result.runId} is still ${result.status} (wait timed out)` : `run ${result.runId} ${result.status}`;
  const lines = [head];
  if (result.error !== null) lines.push(`error: ${result.error}`);
  if (result.result !== null && !result.waitTimedOut) lines.push("", result.result);
  return `${lines.join("\n")}\n`;
}
