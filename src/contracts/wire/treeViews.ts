import type { BudgetExceeded, BudgetKind, BudgetLimits, BudgetRemaining, BudgetSpend } from "../entities/budgets.js";
import type { RunKind, RunStatus } from "../entities/runs.js";
import type { RuntimeRequestKind, RuntimeRequestStatus } from "../entities/runtimeRequests.js";
import type { AppThread } from "../thread.js";

/**
 * The web UI's two reads of a whole tree (docs/ui.md, "The tree at a
 * glance"): a root's roll-up for the sidebar, and every thread's runs over
 * time for the waterfall. Derived from the engine's folded state at the moment
 * of the read; times are ISO strings, `now` is the server's clock.
 */

/** How a tree's threads stand, by their current run (a thread without a run is idle and counted nowhere). */
export interface TreeStatusCounts {
  /** Queued, starting, running, waiting on children or settling background work. */
  readonly running: number;
  /** Waiting on an approval or an answer. */
  readonly waitingOnYou: number;
  readonly failed: number;
  readonly done: number;
  /** Interrupted or cancelled. */
  readonly stopped: number;
}

/** `GET /api/ui/trees/:rootThreadId`: the sidebar's roll-up of one tree. */
export interface TreeRollup {
  readonly rootThreadId: string;
  readonly now: string;
  /** Every thread of the tree, the root included (delegated children and forks alike). */
  readonly threadCount: number;
  readonly counts: TreeStatusCounts;
  /** The first run's start; null before any run started. */
  readonly startedAt: string | null;
  /** The last run's end once nothing runs; null while work goes on (or before any). */
  readonly endedAt: string | null;
  /** What the tree spent, as the budget ledger counts it (holderSpend over the root's delegation tree). */
  readonly spent: BudgetSpend;
  /** The root's own budget (t3_thread_launch `budget`), read as t3_thread_read answers it; null without one. */
  readonly budget: {
    readonly limits: BudgetLimits;
    readonly remaining: BudgetRemaining;
    readonly reached: readonly BudgetKind[];
    readonly exceeded: BudgetExceeded | null;
  } | null;
}

/** A recorded wait of a run: its agent blocked in delegate_task's wait or t3_thread_wait. */
export interface WaterfallWait {
  readonly nodeId: string;
  readonly label: string | null;
  readonly startedAt: string;
  /** Null while the agent still waits. */
  readonly endedAt: string | null;
  readonly outcome: string;
}

/** An approval or question (or another runtime request) a run raised, from the ask to its answer. */
export interface WaterfallRequest {
  readonly requestId: string;
  /** `approval`, `question`, or `request` for any other kind. */
  readonly category: "approval" | "question" | "request";
  readonly kind: RuntimeRequestKind;
  readonly status: RuntimeRequestStatus;
  /** The decision (`accept`, `decline` ...), `answered`, `dismissed`, or the status when it ended unanswered. */
  readonly outcome: string;
  readonly createdAt: string;
  readonly resolvedAt: string | null;
}

export interface WaterfallRun {
  readonly runId: string;
  readonly ordinal: number;
  readonly kind: RunKind;
  readonly status: RunStatus;
  /** When it was created (queued). */
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly endReason: string | null;
  /** The failure's code and message, for a failed run. */
  readonly failure: string | null;
  readonly waits: readonly WaterfallWait[];
  readonly requests: readonly WaterfallRequest[];
}

export interface WaterfallThread {
  readonly threadId: string;
  readonly parentThreadId: string | null;
  readonly relation: AppThread["lineage"]["relation"];
  /** 0 for the root. */
  readonly depth: number;
  readonly title: string;
  readonly archived: boolean;
  readonly runs: readonly WaterfallRun[];
}

/** `GET /api/ui/trees/:rootThreadId/waterfall`: every thread of the tree (parents before children, depth first) with its runs. */
export interface TreeWaterfall {
  readonly rootThreadId: string;
  readonly title: string;
  readonly now: string;
  /** The earliest run's creation; null before any run. */
  readonly startedAt: string | null;
  /** The last run's end once nothing runs; null while work goes on. */
  readonly endedAt: string | null;
  readonly threads: readonly WaterfallThread[];
}
