import type { DelegatedTask, DelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { type Run, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { contextTransferEvent, nodeEvent } from "../../contracts/events.js";
import type { Changes } from "../run/changes.js";
import { activeRun, queuedRuns } from "../run/lifecycle.js";
import { pendingLimitResume } from "../run/limitWait.js";
import { deliverNotice } from "../run/notify.js";
import { settleFollowUps } from "./followUps.js";
import { checkStructuredResult, repairInstruction } from "./structuredResult.js";
import { withoutSystemReminders } from "./agentText.js";
import { changed } from "../thread/guards.js";

/**
 * The run whose end settles the task: the child's newest run that actually
 * ran. A follow-up cancelled (or still held) before it started never did, so
 * it neither replaces the result nor turns a completed task into a cancelled
 * one; only when no run ever ran (a task whose own queued run was cancelled)
 * does the newest cancelled run decide.
 */
function finalRun(changes: Changes, threadId: string): Run | null {
  const ended = changes.threadRuns(threadId).filter((run) => isTerminalRunStatus(run.status));
  return ended.findLast((run) => run.status !== "cancelled") ?? ended[ended.length - 1] ?? null;
}

/** The latest assistant text of a run: a successful task's result. */
export function latestAssistantText(changes: Changes, run: Run): string | null {
  const items = changes.state.turnItems.get(run.threadId) ?? [];
  let text: string | null = null;
  for (const item of items) if (item?.runId === run.id && item.type === "assistant_message") text = item.text;
  for (const event of changes.events) {
    if (event.type !== "turn-item.updated") continue;
    const item = (event.data as { item: { runId: string | null; type: string; text?: string } }).item;
    if (item.runId === run.id && item.type === "assistant_message" && item.text !== undefined) text = item.text;
  }
  return text;
}

/** Work the child still owns: an active or unheld queued run, a resume after a usage limit, an unfinished task of its own, or a result on its way to it. */
export function childStillWorking(changes: Changes, childThreadId: string): boolean {
  if (activeRun(changes, childThreadId) !== null) return true;
  if (pendingLimitResume(changes, childThreadId) !== null) return true;
  if (queuedRuns(changes, childThreadId).some((run) => !run.held)) return true;
  return changes
    .allTasks()
    .some((task) => task.parentThreadId === childThreadId && (!isTerminalDelegatedTaskStatus(task.status) || task.completionDelivery === "pending"));
}

/**
 * A task's published result: a failed run shows its provider error before any
 * progress text; a successful one the latest assistant content of its final
 * work turn.
 */
function publishedSummary(changes: Changes, run: Run): string | null {
  const text = withoutSystemReminders(latestAssistantText(changes, run));
  if (run.status === "failed") {
    const error = `Error: ${run.failure?.message ?? "the run failed"}`;
    return text === null ? error : `${error}\n\n${text}`;
  }
  return text;
}

type TerminalTaskStatus = Extract<DelegatedTaskStatus, "completed" | "failed" | "cancelled" | "interrupted">;

function terminalStatus(task: DelegatedTask, run: Run): TerminalTaskStatus {
  switch (run.status) {
    case "completed":
      return task.cancelRequestedAt !== null ? "interrupted" : "completed";
    case "failed":
      return "failed";
    case "cancelled":
      return "cancelled";
    default:
      return "interrupted";
  }
}

/**
 * Finalize the task that owns `childThreadId` once its known work is over,
 * then its parent's task in turn (a parent that waited on children may now be
 * done too). Idempotent: a task with a result transfer is final already.
 */
export function settleTask(changes: Changes, childThreadId: string): void {
  const taskId = changes.state.taskByChildThread.get(childThreadId);
  if (taskId === undefined) {
    settleThreadOutput(changes, childThreadId);
    return;
  }
  // Follow-ups after the result end with their own run, whatever the task's state.
  settleFollowUps(changes, childThreadId);
  const task = changes.task(taskId);
  if (task === undefined || task.resultContextTransferId !== null) return;
  if (childStillWorking(changes, childThreadId)) return;
  const run = finalRun(changes, childThreadId);
  if (run === null) return;
  const now = changes.ctx.now;
  const status = terminalStatus(task, run);
  const summary = publishedSummary(changes, run);
  const structured = structuredOutcome(changes, task, run, status, summary);
  if (structured === "repairing") return;
  const transferId = changes.ctx.allocate.contextTransfer();
  changes.events.push(
    contextTransferEvent("context-transfer.created", {
      id: transferId,
      threadId: task.parentThreadId,
      sourceThreadId: childThreadId,
      kind: "subagent_result",
      status: "pending",
      subagentId: task.taskId,
      runId: run.id,
      text: summary ?? "",
      createdAt: now,
      updatedAt: now,
      consumedAt: null,
    }),
  );
  // A delivery disposed before the task finished stays disposed.
  const delivery = task.completionDelivery === "disposed" || task.cancelRequestedAt !== null || task.wakePolicy === "never" ? "disposed" : "pending";
  changes.updateTask(task, { status, summary, resultContextTransferId: transferId, completionDelivery: delivery, ...structured }, { status, result: summary, endedAt: now });
  for (const nodeId of [task.parentNodeId, task.childNodeId]) {
    const node = changes.state.nodes.get(nodeId);
    if (node !== undefined) changes.events.push(nodeEvent({ ...node, status, updatedAt: now, endedAt: now }));
  }
  const item = (changes.state.turnItems.get(task.parentThreadId) ?? []).find((candidate) => candidate?.type === "subagent" && candidate.subagentId === task.taskId);
  if (item?.type === "subagent") changes.updateItem(item, { status, result: summary });
  settleTask(changes, task.parentThreadId);
}

type StructuredFields = Pick<DelegatedTask, "structuredResult" | "structuredResultError" | "schemaRepairRunId">;

/**
 * A task with an output schema: the completed answer's parsed value, or (once)
 * a follow-up turn in the child with the validation errors ("repairing": the
 * task settles when that turn ends), or the errors of the answer that stays
 * wrong. A task that did not complete gets no structured result.
 */
function structuredOutcome(changes: Changes, task: DelegatedTask, run: Run, status: TerminalTaskStatus, summary: string | null): StructuredFields | "repairing" {
  const schema = task.outputSchema;
  if (schema === undefined || schema === null) return {};
  if (status !== "completed") return { structuredResultError: { message: `the task ended ${status} without a structured result`, errors: [] } };
  const check = checkStructuredResult(schema, summary);
  if (check.ok) return { structuredResult: check.value, structuredResultError: null };
  if ((task.schemaRepairRunId ?? null) === null) {
    const sent = deliverNotice(
      changes,
      task.childThreadId,
      { title: "The result does not match the output schema", text: repairInstruction(schema, check.errors), sourceThreadId: task.parentThreadId, taskId: task.taskId },
      { allowSteer: false },
    );
    if (sent.runId !== null) {
      changes.updateTask(task, { schemaRepairRunId: sent.runId });
      return "repairing";
    }
  }
  const attempts = (task.schemaRepairRunId ?? null) === null ? "the answer" : "the answer and its one repair";
  return { structuredResultError: { message: `${attempts} did not match the output schema`, errors: [...check.errors] } };
}

/**
 * A thread started with an output schema (create_threads, t3_thread_launch):
 * once its work is over, its final answer is checked as a task's is, with one
 * repair turn on mismatch. Checked once: later turns leave the outcome alone.
 */
function settleThreadOutput(changes: Changes, threadId: string): void {
  const output = changes.thread(threadId)?.structuredOutput;
  if (output === undefined || output === null || (output.status !== "pending" && output.status !== "repairing")) return;
  if (childStillWorking(changes, threadId)) return;
  const run = finalRun(changes, threadId);
  if (run === null) return;
  let next: NonNullable<typeof output>;
  if (run.status !== "completed") {
    next = { ...output, status: "mismatched", error: { message: `the thread's work ended ${run.status} without a structured result`, errors: [] } };
  } else {
    const check = checkStructuredResult(output.schema, publishedSummary(changes, run));
    if (check.ok) {
      next = { ...output, status: "matched", value: check.value, error: null };
    } else if (output.status === "pending") {
      const sent = deliverNotice(
        changes,
        threadId,
        { title: "The result does not match the output schema", text: repairInstruction(output.schema, check.errors), sourceThreadId: null },
        { allowSteer: false },
      );
      next =
        sent.runId === null
          ? { ...output, status: "mismatched", error: { message: "the answer did not match the output schema", errors: [...check.errors] } }
          : { ...output, status: "repairing", repairRunId: sent.runId };
    } else {
      next = { ...output, status: "mismatched", error: { message: "the answer and its one repair did not match the output schema", errors: [...check.errors] } };
    }
  }
  const thread = changes.thread(threadId)!;
  changes.putThread("thread.metadata-updated", changed(thread, changes.ctx, { structuredOutput: next }));
}
