import type { EffectPayload } from "../../contracts/effects.js";
import { type MergeQueueEndStatus, type MergeQueueFailure, MergeQueueStatus, isPendingMergeStatus } from "../../contracts/entities/mergeQueue.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { joinId } from "../../core/ids.js";
import { CheckFailedError } from "../../workspaces/checkedMerge.js";
import { HANDED_ON_REFUSALS, WorkspaceErrorCode, isWorkspaceError } from "../../workspaces/errors.js";
import { AppError } from "../errors.js";
import { FAILURE_OF_WORKSPACE_ERROR } from "./failures.js";
import { type MergeContext, mergeChild } from "./mergeChild.js";
import { handToResolver, mergeResolved } from "./resolver.js";

/** The most characters of a check's output an entry keeps: its tail. */
export const ENTRY_CHECK_OUTPUT_CHARS = 8_000;

type MergeRequest = EffectPayload<"merge-queue.merge">;

/**
 * The merge queue's effect (docs/workspaces.md, "The merge queue"): begin the
 * entry (`merge-queue.start`), merge it with the project's check, and record
 * how it ended (`merge-queue.finish`), which begins the next one. An entry
 * cancelled or ended meanwhile is left alone. A retryable git failure (a
 * lock, the parent's HEAD moved) is thrown, so the outbox tries again; any
 * refusal of the merge itself ends the entry with its reason.
 */
export async function mergeQueuedEntry(ctx: MergeContext, { parentThreadId, entryId }: MergeRequest): Promise<void> {
  const entry = ctx.orchestrator.state.mergeQueueEntries.get(entryId);
  if (entry === undefined || !isPendingMergeStatus(entry.status)) return;
  const attempt = entry.attempts + 1;
  // The log's length tells a start after the entry waited again for its threads from the one before it.
  const start = await ctx.orchestrator.dispatch({ type: "merge-queue.start", commandId: joinId("cmd", "merge-queue-start", entryId, attempt, String(entry.log.length)), data: { parentThreadId, entryId } });
  if (start.status === "rejected" || ctx.orchestrator.state.mergeQueueEntries.get(entryId)?.status !== MergeQueueStatus.merging) return;
  const resolution = entry.resolution ?? null;
  // A resolved entry merges its resolver's branch; a refusal of that ends it (one resolver per entry).
  const merged =
    resolution?.status === "resolved"
      ? mergeResolved(ctx, entry, resolution)
      : mergeChild(ctx, entry.childThreadId, { commitChild: entry.commitChild, message: entry.message, onRefused: entry.onRefused === "child" ? "child" : "report" });
  const ended = await merged.then(
    (result): Ending => ({ status: result.outcome === "returned_to_child" ? MergeQueueStatus.returnedToChild : MergeQueueStatus.merged, result, failure: result.returnedToChild === undefined ? null : returnedFailure(result) }),
    async (error: unknown): Promise<Ending | null> => {
      const ending = refusal(error);
      if (resolution !== null) return { ...ending, failure: ending.failure === null ? null : { ...ending.failure, message: `the resolver's merge (thread ${resolution.threadId}) was refused: ${ending.failure.message}` } };
      if (entry.onRefused !== "resolver" || !isWorkspaceError(error) || !HANDED_ON_REFUSALS.has(error.code)) return ending;
      const refused = await handToResolver(ctx, entry, error);
      if (refused === null) return null;
      return { ...ending, failure: ending.failure === null ? null : { ...ending.failure, message: `${ending.failure.message} (no resolver could take it: ${refused})` } };
    },
  );
  // Handed to its resolver: the entry waits on it, at the queue's head.
  if (ended !== null) await finishEntry(ctx, parentThreadId, entryId, attempt, ended);
}

/** An entry whose effect failed for good ends `failed` with the reason, so the queue moves on. */
export async function failQueuedEntry(ctx: MergeContext, { parentThreadId, entryId }: MergeRequest, reason: string): Promise<void> {
  const entry = ctx.orchestrator.state.mergeQueueEntries.get(entryId);
  if (entry?.status !== MergeQueueStatus.merging) return;
  await finishEntry(ctx, parentThreadId, entryId, entry.attempts, {
    status: MergeQueueStatus.failed,
    result: null,
    failure: { code: "orchestration_error", message: reason, workspaceCode: null, files: [], check: null },
  });
}

interface Ending {
  readonly status: MergeQueueEndStatus;
  readonly result: MergeIntoParentOutput | null;
  readonly failure: MergeQueueFailure | null;
}

async function finishEntry(ctx: MergeContext, parentThreadId: string, entryId: string, attempt: number, ending: Ending): Promise<void> {
  const returned = ending.result?.returnedToChild;
  const result =
    ending.result === null
      ? null
      : { ...ending.result, check: trimmedCheck(ending.result.check ?? null), ...(returned === undefined ? {} : { returnedToChild: { ...returned, check: trimmedCheck(returned.check) } }) };
  await ctx.orchestrator.dispatch({ type: "merge-queue.finish", commandId: joinId("cmd", "merge-queue-finish", entryId, attempt), data: { parentThreadId, entryId, status: ending.status, result, failure: ending.failure } });
}

/** A refusal as the entry records it; a retryable git failure and anything unexpected are thrown for the outbox to retry. */
function refusal(error: unknown): Ending {
  if (isWorkspaceError(error)) {
    const code = FAILURE_OF_WORKSPACE_ERROR[error.code];
    if (error.retryable) throw error;
    const check = error instanceof CheckFailedError ? trimmedCheck(error.check) : null;
    const status = error.code === WorkspaceErrorCode.mergeConflict ? MergeQueueStatus.conflict : error.code === WorkspaceErrorCode.checkFailed ? MergeQueueStatus.checkFailed : MergeQueueStatus.failed;
    return { status, result: null, failure: { code, message: error.message, workspaceCode: error.code, files: [...error.files], check } };
  }
  if (error instanceof AppError) {
    const workspaceCode = typeof error.details?.workspaceCode === "string" ? error.details.workspaceCode : null;
    return { status: MergeQueueStatus.failed, result: null, failure: { code: error.code, message: error.message, workspaceCode, files: [], check: null } };
  }
  throw error;
}

function returnedFailure(result: MergeIntoParentOutput): MergeQueueFailure | null {
  const returned = result.returnedToChild;
  if (returned === undefined) return null;
  return { code: "workspace_conflict", message: "the merge was refused and handed back to the child", workspaceCode: returned.workspaceCode, files: returned.files, check: trimmedCheck(returned.check) };
}

function trimmedCheck<T extends { output: string } | null>(check: T): T {
  if (check === null || check.output.length <= ENTRY_CHECK_OUTPUT_CHARS) return check;
  return { ...check, output: check.output.slice(-ENTRY_CHECK_OUTPUT_CHARS) };
}
