import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { activeRunOf, latestRunOf, runsOf } from "../../engine/queries.js";
import type { OrchestrationState } from "../../core/state.js";

/** The link agents use to mention a thread (spec 000, t3_thread_read). */
export function threadLink(environmentId: string, threadId: string): string {
  return `t3-thread://v2/${encodeURIComponent(environmentId)}/${encodeURIComponent(threadId)}`;
}

export interface RunSummary {
  readonly runId: string;
  readonly ordinal: number;
  readonly kind: Run["kind"];
  readonly status: Run["status"];
  readonly endReason: string | null;
  readonly error: string | null;
  readonly createdAt: string;
  readonly endedAt: string | null;
}

export function runSummary(run: Run): RunSummary {
  return {
    runId: run.id,
    ordinal: run.ordinal,
    kind: run.kind,
    status: run.status,
    endReason: run.endReason,
    error: run.failure?.message ?? null,
    createdAt: run.createdAt,
    endedAt: run.endedAt,
  };
}

/** A thread as list and read results show it, with provenance and what it still waits on. */
export function threadSummary(state: OrchestrationState, environmentId: string, thread: AppThread, now: string) {
  const latest = latestRunOf(state, thread.id);
  const active = activeRunOf(state, thread.id);
  const pendingRequests = [...state.runtimeRequests.values()].filter((r) => r.threadId === thread.id && r.status === "pending").length;
  const linked = thread.pullRequests.find((pr) => pr.unlinkedAt === null) ?? null;
  return {
    threadId: thread.id,
    link: threadLink(environmentId, thread.id),
    title: thread.title,
    titleRegenerating: thread.titleRegenerating,
    projectId: thread.projectId,
    providerInstanceId: thread.providerInstanceId,
    model: thread.modelSelection?.model ?? null,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    relation: thread.lineage.relation,
    parentThreadId: thread.lineage.parentThreadId,
    status: latest === null ? "idle" : latest.status,
    latestRunId: latest?.id ?? null,
    activeRunId: active?.id ?? null,
    queuedRuns: thread.queuedRuns.length,
    pendingRequests,
    pullRequest: linked === null ? null : { url: linked.url, number: linked.number, title: linked.title },
    archived: thread.archivedAt !== null,
    snoozed: thread.snoozedUntil !== null && thread.snoozedUntil > now,
    snoozedUntil: thread.snoozedUntil,
    blockedOnThreadWait: false,
    pendingBackgroundTasks: thread.pendingBackgroundTasks.filter((t) => t.kind === "subagent" || t.kind === "background_task" || t.awaited === true).length,
    createdBy: thread.createdBy,
    creationSource: thread.creationSource,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
  };
}
export type ThreadSummary = ReturnType<typeof threadSummary>;

export function recentRuns(state: OrchestrationState, threadId: string, count: number): RunSummary[] {
  return runsOf(state, threadId).slice(-count).map(runSummary);
}

/** Longest text kept for one item in a read; the rest is reported as truncated. */
export const ITEM_TEXT_LIMIT = 8_000;

function clip(text: string): { text: string; truncated: boolean } {
  return text.length <= ITEM_TEXT_LIMIT ? { text, truncated: false } : { text: text.slice(0, ITEM_TEXT_LIMIT), truncated: true };
}

const MESSAGE_TYPES: ReadonlySet<TurnItem["type"]> = new Set(["user_message", "assistant_message", "proposed_plan"]);

export function isMessageItem(item: TurnItem): boolean {
  return MESSAGE_TYPES.has(item.type);
}

/** One timeline item as a read shows it: messages whole (bounded), other activity summarized. */
export function itemView(item: TurnItem) {
  const base = { position: item.position, itemId: item.id, type: item.type, runId: item.runId, createdAt: item.createdAt };
  switch (item.type) {
    case "user_message":
    case "assistant_message":
      return { ...base, ...clip(item.text), createdBy: item.createdBy, creationSource: item.creationSource };
    case "proposed_plan":
      return { ...base, ...clip(item.markdown), title: item.title };
    case "command_execution":
      return { ...base, ...clip(`$ ${item.command}\n${item.outputPreview}`), status: item.status, exitCode: item.exitCode };
    case "file_change":
      return { ...base, text: item.changes.map((c) => `${c.kind} ${c.path} (+${c.additions} -${c.deletions})`).join("\n"), truncated: false, status: item.status };
    case "approval_request":
      return { ...base, text: `${item.title}${item.detail ? `: ${item.detail}` : ""}`, truncated: false, requestId: item.requestId, status: item.status, decision: item.decision };
    case "user_input_request":
      return { ...base, text: item.questions.map((q) => q.question).join("\n"), truncated: false, requestId: item.requestId, status: item.status, answers: item.answers };
    case "dynamic_tool":
      return { ...base, ...clip(`${item.toolName}(${JSON.stringify(item.arguments) ?? ""}) → ${JSON.stringify(item.result) ?? "null"}`), status: item.status };
    case "reasoning":
      return { ...base, ...clip(item.summary ?? item.text ?? "") };
    case "system_notice":
      return { ...base, text: item.text, truncated: false, level: item.level };
    case "error":
      return { ...base, text: item.message, truncated: false, code: item.code };
    case "run_interrupt_request":
      return { ...base, text: `interrupt requested by ${item.requestedBy}${item.reason ? `: ${item.reason}` : ""}`, truncated: false };
    case "subagent":
      return { ...base, ...clip(item.result ?? item.prompt), status: item.status, childThreadId: item.childThreadId };
    case "thread_created":
      return { ...base, text: `created ${item.relation} thread ${item.childThreadId}: ${item.title}`, truncated: false, childThreadId: item.childThreadId };
    case "notification":
      return { ...base, ...clip(item.text), sourceThreadId: item.sourceThreadId };
    default:
      return { ...base, text: item.type, truncated: false };
  }
}
export type ItemView = ReturnType<typeof itemView>;

/** The latest assistant text of a run: its result. */
export function runResultText(state: OrchestrationState, run: Run): string | null {
  const items = state.turnItems.get(run.threadId) ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.runId === run.id && item.type === "assistant_message") return item.text;
  }
  return null;
}
