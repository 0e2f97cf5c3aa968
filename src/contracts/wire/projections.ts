import type { ExecutionNode, Run, RunAttempt, RunStatus } from "../entities/runs.js";
import type { RuntimeRequest } from "../entities/runtimeRequests.js";
import type { WorkflowStatus } from "../entities/workflows.js";
import type { Subagent } from "../entities/subagents.js";
import type { SearchHitView } from "../tools/searchTools.js";
import type { AppThread } from "../thread.js";
import type { TurnItem } from "../turnItems.js";

/**
 * What the wire answers with (spec 004 §3.3): the records of the five HTTP
 * snapshot endpoints and of the WebSocket methods. Every record names the
 * log position it reflects (`snapshotSequence`); a subscription started from
 * it delivers every later change exactly once.
 */

/** Bounded snapshot: turn items by default and at most (spec 004 §3.3). */
export const BOUNDED_SNAPSHOT_LIMITS = { defaultTurnItems: 100, maxTurnItems: 500 } as const;
/** History page: items by default and at most (spec 004 §3.3). */
export const HISTORY_PAGE_LIMITS = { defaultItems: 50, maxItems: 200 } as const;

/** One row of the thread list. */
export interface ThreadShell {
  readonly id: string;
  readonly projectId: string;
  readonly title: string;
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  readonly runtimeMode: AppThread["runtimeMode"];
  readonly interactionMode: AppThread["interactionMode"];
  readonly relation: AppThread["lineage"]["relation"];
  readonly parentThreadId: string | null;
  readonly archived: boolean;
  readonly settled: boolean;
  readonly snoozedUntil: string | null;
  readonly pinnedRank: number | null;
  readonly activeRank: number | null;
  readonly unread: boolean;
  readonly pullRequests: AppThread["pullRequests"];
  /** The status of the thread's latest run, or of its turn in flight while later runs wait (currentRunOf); null before its first run. */
  readonly runStatus: RunStatus | null;
  /**
   * Its active run is inside a recorded wait: its agent is blocked in a wait
   * for another thread or a delegated task (delegate_task's wait,
   * t3_thread_wait).
   */
  readonly inWait: boolean;
  /** The newest workflow the thread runs (a running one before any ended one), for a marker in the list; null when it never ran one. */
  readonly workflow: ShellWorkflow | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A workflow as a thread list row shows it: its name, status and how many of its agent() steps are done. */
export interface ShellWorkflow {
  readonly workflowId: string;
  readonly name: string | null;
  readonly status: WorkflowStatus;
  /** Steps that ended (completed or failed) of those recorded so far. */
  readonly stepsDone: number;
  readonly stepsTotal: number;
}

export interface ShellSnapshot {
  /** The log position the snapshot reflects. */
  readonly snapshotSequence: number;
  readonly threads: readonly ThreadShell[];
}

/** The thread record alone (GET .../snapshot answers the whole ThreadProjection). */
export interface ThreadSnapshot {
  readonly snapshotSequence: number;
  readonly thread: AppThread;
}

/** Everything Loom holds about one thread: its record, execution graph and whole timeline. */
export interface ThreadProjection {
  readonly snapshotSequence: number;
  readonly thread: AppThread;
  /** In ordinal order. */
  readonly runs: readonly Run[];
  /** Per run, in attempt order. */
  readonly attempts: readonly RunAttempt[];
  readonly nodes: readonly ExecutionNode[];
  /** The thread's subagents (its delegated tasks and provider-native ones). */
  readonly subagents: readonly Subagent[];
  /** Runtime requests (approvals, questions), oldest first. */
  readonly requests: readonly RuntimeRequest[];
  /** The whole timeline, oldest first. */
  readonly items: readonly TurnItem[];
}

/**
 * A cold open: the newest turn items and what they need to render, with a
 * cursor to page older history. Runs are those of the items plus every run
 * that has not ended; subagents and requests likewise.
 */
export interface BoundedSnapshot {
  readonly snapshotSequence: number;
  readonly thread: AppThread;
  readonly runs: readonly Run[];
  readonly subagents: readonly Subagent[];
  readonly requests: readonly RuntimeRequest[];
  /** The newest `limit` items, oldest first. */
  readonly items: readonly TurnItem[];
  /** Cursor for history-page to read the items before these; null when these are all. */
  readonly historyCursor: string | null;
}

/** Older items, `limit` at a time, newest page first; each page is oldest first. */
export interface HistoryPage {
  readonly snapshotSequence: number;
  readonly threadId: string;
  readonly items: readonly TurnItem[];
  /** Cursor for the page before this one; null when this page reaches the start. */
  readonly nextCursor: string | null;
}

/** One message of a transcript. */
export interface TranscriptEntry {
  readonly itemId: string;
  readonly position: number;
  readonly runId: string | null;
  readonly role: "user" | "assistant";
  readonly text: string;
  readonly createdAt: string;
}

/** The conversation only: user and assistant messages, oldest first. */
export interface Transcript {
  readonly snapshotSequence: number;
  readonly threadId: string;
  readonly title: string;
  readonly entries: readonly TranscriptEntry[];
}

/** One thread of a lineage tree. */
export interface ThreadFamilyMember {
  readonly threadId: string;
  readonly parentThreadId: string | null;
  readonly relation: AppThread["lineage"]["relation"];
  readonly title: string;
  readonly providerInstanceId: string | null;
  readonly runStatus: RunStatus | null;
  readonly archived: boolean;
  readonly createdAt: string;
}

/** Every thread sharing a root with the asked one, parents before their children. */
export interface ThreadFamily {
  readonly snapshotSequence: number;
  readonly rootThreadId: string;
  readonly threads: readonly ThreadFamilyMember[];
}

/** A committed domain event as a stream carries it. */
export interface WireEvent {
  readonly sequence: number;
  readonly type: string;
  readonly data: unknown;
  readonly occurredAt: string;
}

/** orchestration.subscribeThread updates, in order. */
export type ThreadStreamUpdate =
  /** First update of a fresh subscription: everything up to `snapshot.snapshotSequence`. */
  | { readonly kind: "snapshot"; readonly snapshot: BoundedSnapshot }
  /** First update of a resumed subscription: events after `afterSequence` follow, none missed. */
  | { readonly kind: "resumed"; readonly afterSequence: number }
  /** A committed change to the thread (durable; carries whole entities, apply as an upsert). */
  | { readonly kind: "event"; readonly event: WireEvent }
  /** Assistant text as the provider streams it (live only, never stored; the completed item follows as an event). */
  | { readonly kind: "delta"; readonly runId: string; readonly itemId: string; readonly text: string }
  /** A command started streaming its output: follow it with subscribeCommandOutput (live only); `command` is its command line when the provider told it. */
  | { readonly kind: "output"; readonly runId: string; readonly itemId: string; readonly outputStreamId: string; readonly command: string | null };

/** orchestration.subscribeShell / subscribeArchivedShell updates, in order. */
export type ShellStreamUpdate =
  | { readonly kind: "snapshot"; readonly snapshot: ShellSnapshot }
  | { readonly kind: "resumed"; readonly afterSequence: number }
  /** The row as it is now (a new thread, or a changed one). */
  | { readonly kind: "upsert"; readonly sequence: number; readonly thread: ThreadShell }
  /** The thread left this list (archived, unarchived, deleted, or an idle subagent when omitted). */
  | { readonly kind: "remove"; readonly sequence: number; readonly threadId: string };

/** orchestration.subscribeCommandOutput updates, in order; the stream completes when the command ends. */
export type CommandOutputUpdate =
  /**
   * The first update. `source: "live"`: the retained output from `offset` (a
   * character offset into the whole output), `truncated` when output before
   * it was dropped (the tail is bounded). `source: "preview"`: the command's
   * output is no longer live (it ended before a restart, or its tail was
   * evicted), so this is the item's recorded head, `truncated` when the
   * output went on past it; the stream completes after it.
   */
  | {
      readonly kind: "tail";
      readonly source: "live" | "preview";
      readonly offset: number;
      readonly text: string;
      readonly truncated: boolean;
      readonly ended: boolean;
    }
  | { readonly kind: "chunk"; readonly offset: number; readonly text: string };

/**
 * orchestration.searchThreadStream updates, in order: the thread's hits a
 * page at a time, best first, until there are no more (or the search's offset
 * bound, 1000, is reached); then the stream completes.
 */
export type SearchStreamUpdate = {
  readonly kind: "hits";
  /** Index of this page's first hit among all hits. */
  readonly offset: number;
  readonly hits: readonly SearchHitView[];
  /** More hits follow in a later update (false on the last page). */
  readonly hasMore: boolean;
  /** False while the search index is still catching up with the log. */
  readonly complete: boolean;
};
