import type { LoomToolCaller } from "./client.js";
import { WaitProgress, type ProgressStream } from "./progress.js";
import type { ThreadWaitResult } from "./results.js";
import { type ThreadTreeResult, formatTree, treeNodes } from "./treeOutput.js";

export interface RunWaitRequest {
  readonly threadId: string;
  /** Default: the latest run when the first wait starts; later waits stay on that run. */
  readonly runId?: string | undefined;
  /** Overall budget; without one, wait until the run ends. */
  readonly timeoutMs?: number | undefined;
  /** The status known before waiting, shown until the server reports progress. */
  readonly knownStatus?: string | undefined;
}

/** Time the SDK allows between progress notifications before it gives up on a wait. */
const SILENCE_TIMEOUT_MS = 120_000;

/**
 * t3_thread_wait until the run ends. The server caps every wait (30 s by
 * default) and answers waitTimedOut: true, so this repeats the call on the
 * same run until it ends or the caller's own timeout passes. Progress goes to
 * `stream` (stderr), never to stdout.
 */
export async function waitForRun(caller: LoomToolCaller, request: RunWaitRequest, stream: ProgressStream, clock: () => number = Date.now): Promise<ThreadWaitResult> {
  const deadline = request.timeoutMs === undefined ? null : clock() + request.timeoutMs;
  let runId = request.runId;
  const progress = new WaitProgress({
    stream,
    clock,
    initial: runId === undefined ? `thread ${request.threadId}: waiting for its latest run` : `run ${runId} is ${request.knownStatus ?? "pending"}`,
  }).start();
  try {
    for (;;) {
      const remaining = deadline === null ? undefined : Math.max(0, deadline - clock());
      const result = await caller.call<ThreadWaitResult>(
        "t3_thread_wait",
        { threadId: request.threadId, ...(runId === undefined ? {} : { runId }), ...(remaining === undefined ? {} : { timeoutMs: remaining }) },
        { onprogress: (p) => progress.update(p.message ?? `run ${runId ?? "?"} is waiting`), timeout: SILENCE_TIMEOUT_MS, resetTimeoutOnProgress: true },
      );
      if (!result.waitTimedOut || result.runId === null) return result;
      runId = result.runId;
      progress.update(`run ${runId} is ${result.status}`);
      if (deadline !== null && clock() >= deadline) return result;
    }
  } finally {
    progress.stop();
  }
}

export interface TreeWaitResult {
  readonly threadId: string;
  readonly timedOut: boolean;
  readonly tree: ThreadTreeResult;
  /** The tree as `loom threads tree` prints it, after a line saying how the wait ended. */
  readonly text: string;
}

const FINISHED = new Set(["idle", "completed", "failed", "interrupted", "cancelled"]);

/**
 * Wait until the thread and every descendant has no unfinished run. Each round
 * reads the tree, then waits (t3_thread_wait, a server-side wait on the run's
 * events) on the first unfinished run; a child delegated meanwhile shows up in
 * the next round's tree.
 */
export async function waitForTree(caller: LoomToolCaller, request: { readonly threadId: string; readonly timeoutMs?: number | undefined }, stream: ProgressStream, clock: () => number = Date.now): Promise<TreeWaitResult> {
  const deadline = request.timeoutMs === undefined ? null : clock() + request.timeoutMs;
  const progress = new WaitProgress({ stream, clock, initial: `tree of ${request.threadId}: reading` }).start();
  const path = `/api/threads/tree?root=${encodeURIComponent(request.threadId)}`;
  try {
    for (;;) {
      const tree = await caller.api.request<ThreadTreeResult>("GET", path);
      const open = treeNodes(tree).filter((node) => !FINISHED.has(node.status));
      if (open.length === 0) return { threadId: request.threadId, timedOut: false, tree, text: `tree of ${request.threadId} is idle\n${formatTree(tree)}` };
      const remaining = deadline === null ? undefined : deadline - clock();
      if (remaining !== undefined && remaining <= 0) {
        return { threadId: request.threadId, timedOut: true, tree, text: `tree of ${request.threadId} still has ${open.length} unfinished thread(s) (wait timed out)\n${formatTree(tree)}` };
      }
      const next = open[0]!;
      progress.update(`${open.length} unfinished; ${next.threadId} is ${next.status}${next.waitingOn === null ? "" : ` (waiting on ${next.waitingOn})`}`);
      await caller.call<ThreadWaitResult>(
        "t3_thread_wait",
        { threadId: next.threadId, ...(next.latestRunId === null ? {} : { runId: next.latestRunId }), ...(remaining === undefined ? {} : { timeoutMs: remaining }) },
        { timeout: SILENCE_TIMEOUT_MS, resetTimeoutOnProgress: true, onprogress: () => undefined },
      );
    }
  } finally {
    progress.stop();
  }
}
