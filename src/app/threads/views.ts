import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { activeRunOf, isBlockedOnThreadWait, latestRunOf, runsOf } from "../../engine/queries.js";
import type { OrchestrationState } from "../../core/state.js";
import type { Timeline } from "../../engine/timeline.js";
import type { ItemView, RunSummary, ThreadSummary } from "../../contracts/tools/toolOutputs.js";
import { isEffectivelySnoozed, pendingBackgroundTaskCount, pendingRequestCount } from "./attention.js";
import { limitRecoveryView } from "../limits/limitView.js";
import { backgroundWorkText } from "./backgroundView.js";

/** The first `say` text anywhere in a parsed JSON document, depth first. */
function firstSay(value: unknown): string | null {
  if (Array.isArray(value)) {
    for (const entry of value) {
      const found = firstSay(entry);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  for (const [key, entry] of Object.entries(value)) {
    const found = key === "say" && typeof entry === "string" ? entry : firstSay(entry);
    if (found !== null) return found;
  }
  return null;
}

/** A JSON object's text (a scripted agent's script): its first `say`, else null; undefined for any other text. */
function titleFromJson(text: string): string | null | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    return firstSay(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * A title made from text: its first non-blank line, at most 60 characters;
 * null for blank text. Text that is a JSON object (a script) is titled by its
 * first `say`, or null so the caller's generic title applies, never by raw JSON.
 */
export function titleFromText(text: string): string | null {
  const trimmed = text.trim();
  const fromJson = titleFromJson(trimmed);
  if (fromJson !== undefined) return fromJson === null ? null : titleFromText(fromJson);
  const line = trimmed.split("\n")[0]!.trim();
  if (line === "") return null;
  return line.length <= 60 ? line : `${line.slice(0, 57).trimEnd()}...`;
}

/** The link agents use to mention a thread (spec 000, t3_thread_read). */
export function threadLink(environmentId: string, threadId: string): string {
  return `t3-thread://v2/${encodeURIComponent(environmentId)}/${encodeURIComponent(threadId)}`;
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

/** The thread's linked pull request as results show it (the first one still linked), with its last synced status. */
export function linkedPullRequest(thread: AppThread): ThreadSummary["pullRequest"] {
  const linked = thread.pullRequests.find((pr) => pr.unlinkedAt === null) ?? null;
  if (linked === null) return null;
  return { url: linked.url, number: linked.number, title: linked.title, status: linked.status ?? null, watched: (thread.pullRequestWatch ?? null) !== null };
}

/** A thread as list and read results show it, with provenance and what it still waits on. */
export function threadSummary(state: OrchestrationState, environmentId: string, thread: AppThread, now: string): ThreadSummary {
  const latest = latestRunOf(state, thread.id);
  const active = activeRunOf(state, thread.id);
  const pendingRequests = pendingRequestCount(state, thread.id);
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
    pullRequest: linkedPullRequest(thread),
    archived: thread.archivedAt !== null,
    snoozed: isEffectivelySnoozed(state, thread, now, pendingRequests),
    snoozedUntil: thread.snoozedUntil,
    blockedOnThreadWait: isBlockedOnThreadWait(state, thread),
    pendingBackgroundTasks: pendingBackgroundTaskCount(state, thread),
    createdBy: thread.createdBy,
    creationSource: thread.creationSource,
    createdAt: thread.createdAt,
    // A run's progress and end change the thread as a person sees it, though not its record.
    updatedAt: latest !== null && latest.updatedAt > thread.updatedAt ? latest.updatedAt : thread.updatedAt,
    worktreePath: thread.worktreePath,
    branch: thread.branch,
    ...((thread.workspace?.overlaps?.length ?? 0) > 0 ? { overlaps: thread.workspace!.overlaps! } : {}),
    ...limitField(state, thread),
    ...backgroundField(state, thread),
  };
}

/** The work the thread's run settles, as reads show it, while it settles. */
function backgroundField(state: OrchestrationState, thread: AppThread): Pick<ThreadSummary, "backgroundWork"> {
  const text = backgroundWorkText(state, thread);
  return text === null ? {} : { backgroundWork: text };
}

/** The thread's limit recovery as reads show it, when a limit holds it. */
function limitField(state: OrchestrationState, thread: AppThread): Pick<ThreadSummary, "limitRecovery"> {
  const view = limitRecoveryView(state, thread);
  return view === null ? {} : { limitRecovery: view };
}

export function recentRuns(state: OrchestrationState, threadId: string, count: number): RunSummary[] {
  return runsOf(state, threadId).slice(-count).map(runSummary);
}

/** Longest text kept for one item in a read; the rest is reported as truncated. */
export const ITEM_TEXT_LIMIT = 8_000;

/** The item types the `messages` view of a read shows. */
export const MESSAGE_ITEM_TYPES: readonly TurnItem["type"][] = ["user_message", "assistant_message", "proposed_plan"];

/** A view with its text bounded (written out field by field: reads are on the hot path). */
function view(item: TurnItem, text: string): ItemView {
  const truncated = text.length > ITEM_TEXT_LIMIT;
  return {
    position: item.position,
    itemId: item.id,
    type: item.type,
    runId: item.runId,
    createdAt: item.createdAt,
    text: truncated ? text.slice(0, ITEM_TEXT_LIMIT) : text,
    truncated,
  };
}

/** One timeline item as a read shows it: messages whole (bounded), other activity summarized. */
export function itemView(item: TurnItem): ItemView {
  switch (item.type) {
    case "user_message":
    case "assistant_message": {
      const v = view(item, item.text);
      v.createdBy = item.createdBy;
      v.creationSource = item.creationSource;
      return v;
    }
    case "proposed_plan": {
      const v = view(item, item.markdown);
      v.title = item.title;
      return v;
    }
    case "command_execution": {
      const v = view(item, `$ ${item.command}\n${item.outputPreview}`);
      v.status = item.status;
      v.exitCode = item.exitCode;
      return v;
    }
    case "file_change": {
      const v = view(item, item.changes.map((c) => `${c.kind} ${c.path} (+${c.additions} -${c.deletions})`).join("\n"));
      v.status = item.status;
      return v;
    }
    case "approval_request": {
      const v = view(item, `${item.title}${item.detail ? `: ${item.detail}` : ""}`);
      v.requestId = item.requestId;
      v.status = item.status;
      v.decision = item.decision;
      return v;
    }
    case "user_input_request": {
      const v = view(item, item.questions.map((q) => q.question).join("\n"));
      v.requestId = item.requestId;
      v.status = item.status;
      v.answers = item.answers;
      return v;
    }
    case "dynamic_tool": {
      const v = view(item, `${item.toolName}(${JSON.stringify(item.arguments) ?? ""}) → ${JSON.stringify(item.result) ?? "null"}`);
      v.status = item.status;
      return v;
    }
    case "reasoning":
      return view(item, item.summary ?? item.text ?? "");
    case "system_notice": {
      const v = view(item, item.text);
      v.level = item.level;
      return v;
    }
    case "error": {
      const v = view(item, item.message);
      v.code = item.code;
      return v;
    }
    case "run_interrupt_request":
      return view(item, `interrupt requested by ${item.requestedBy}${item.reason ? `: ${item.reason}` : ""}`);
    case "subagent": {
      const v = view(item, item.result ?? item.prompt);
      v.status = item.status;
      v.childThreadId = item.childThreadId;
      return v;
    }
    case "thread_created": {
      const v = view(item, `created ${item.relation} thread ${item.childThreadId}: ${item.title}`);
      v.childThreadId = item.childThreadId;
      return v;
    }
    case "checkpoint": {
      const changes = item.files.map((f) => `${f.kind} ${f.path}${f.binary ? " (binary)" : ` (+${f.additions} -${f.deletions})`}`);
      const v = view(item, `checkpoint ${item.status}${changes.length === 0 ? ": no changes" : `\n${changes.join("\n")}`}`);
      v.status = item.status;
      return v;
    }
    case "notification": {
      const v = view(item, item.text);
      v.sourceThreadId = item.sourceThreadId;
      return v;
    }
    default:
      return view(item, item.type);
  }
}

/** The latest assistant text of a run: its result. */
export function runResultText(timeline: Timeline, run: Run): string | null {
  return timeline.latestAssistantText(run.threadId, run.id);
}
