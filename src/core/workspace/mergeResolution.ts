import type { DelegatedTaskRequestCommand } from "../../contracts/commands/delegationCommands.js";
import type { MergeQueueResolveCommand, MergeQueueResolvedCommand } from "../../contracts/commands/mergeQueueCommands.js";
import { isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { type MergeQueueEntry, MergeQueueStatus } from "../../contracts/entities/mergeQueue.js";
import { contextTransferEvent, mergeQueueEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { decideDelegatedTaskRequest } from "../delegation/request.js";
import { ceilingRejection } from "../policy/ceiling.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { entryOf, mergeEffect, nextQueued } from "./mergeQueue.js";

/**
 * Resolver tasks of the merge queue (docs/workspaces.md, "Resolver tasks"):
 * a merging entry refused by a conflict or a failed check, queued with
 * `onRefused: "resolver"`, goes to a delegated child of its parent whose
 * worktree starts at the merge in progress. The delegation is the ordinary
 * one (delegated_task.request: its budgets, limits and the privilege ceiling
 * of the parent), decided in the same command as the entry's change. The
 * entry stays the queue's head while its resolver works, so what it resolves
 * lands on the state it resolved against. When the resolver's task ends, a
 * completed one merges the resolver's branch through the same checked path;
 * one resolver per entry, so a refused resolution ends the entry.
 */

export function decideMergeQueueResolve(state: OrchestrationState, command: MergeQueueResolveCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const found = entryOf(state, data.parentThreadId, data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  if (entry.status !== MergeQueueStatus.merging) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: only a merging entry goes to a resolver`);
  const resolver = entry.resolver ?? null;
  if (resolver === null || (entry.resolution ?? null) !== null) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} has no resolver to hand the merge to (or had one already)`);
  const parent = liveThread(state, entry.parentThreadId);
  if (parent.kind === "rejected") return parent;
  const child = liveThread(state, entry.childThreadId);
  if (child.kind === "rejected") return child;
  const parentRuns = state.threadRuns.get(parent.thread.id) ?? [];
  const parentRunId = parentRuns[parentRuns.length - 1];
  const repoPath = child.thread.workspace?.repoPath;
  if (parentRunId === undefined || repoPath === undefined) return reject(RejectionCode.mergeNotQueueable, `thread ${parent.thread.id} has no run to delegate a resolver from`);
  const delegation: DelegatedTaskRequestCommand = {
    type: "delegated_task.request",
    commandId: command.commandId,
    data: {
      taskId: data.taskId,
      parentThreadId: parent.thread.id,
      parentRunId,
      childThreadId: data.resolverThreadId,
      childRunId: data.resolverRunId,
      childMessageId: data.resolverMessageId,
      task: data.prompt,
      prompt: data.prompt,
      title: data.title,
      role: null,
      mode: "async",
      providerInstanceId: resolver.providerInstanceId,
      model: resolver.model,
      runtimeMode: resolver.runtimeMode,
      interactionMode: resolver.interactionMode,
      clientRequestId: null,
      // The merge queue takes the result; the parent is not woken (a run of its own would hold the merge back).
      wakePolicy: "never",
      isolation: "worktree",
      workspaceRepoPath: repoPath,
      mergeResolution: { entryId: entry.entryId, baseCommit: data.baseCommit },
    },
  };
  const delegated = ceilingRejection(state, delegation) ?? decideDelegatedTaskRequest(state, delegation, ctx);
  if (delegated.kind === "rejected") return delegated;
  const what = data.check === null ? `conflict in ${data.files.join(", ")}` : `check \`${data.check.command}\` failed`;
  const resolving: MergeQueueEntry = {
    ...entry,
    status: MergeQueueStatus.resolving,
    resolution: {
      threadId: data.resolverThreadId,
      taskId: data.taskId,
      runId: data.resolverRunId,
      status: "running",
      baseCommit: data.baseCommit,
      parentCommit: data.parentCommit,
      childCommit: data.childCommit,
      workspaceCode: data.workspaceCode,
      files: data.files,
      check: data.check,
    },
    log: [...entry.log, `${ctx.now} ${what}: handed to resolver thread ${data.resolverThreadId} on ${resolver.providerInstanceId}`],
  };
  // The brief is the context of the resolver's run (its input, before the instructions), and of that run again should it be resumed.
  const brief = contextTransferEvent("context-transfer.created", {
    id: ctx.allocate.contextTransfer(),
    threadId: data.resolverThreadId,
    sourceThreadId: parent.thread.id,
    kind: "manual",
    status: "consumed",
    subagentId: data.taskId,
    runId: data.resolverRunId,
    text: data.brief,
    createdAt: ctx.now,
    updatedAt: ctx.now,
    consumedAt: ctx.now,
    deliveredRunId: data.resolverRunId,
  });
  // The queue waits for the resolver: what it resolves is merged onto the state it resolved against.
  return accept([...delegated.events, brief, mergeQueueEvent(resolving)], delegated.effects);
}

export function decideMergeQueueResolved(state: OrchestrationState, command: MergeQueueResolvedCommand, ctx: DecideContext): Decision {
  const found = entryOf(state, command.data.parentThreadId, command.data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  const resolution = entry.resolution ?? null;
  if (entry.status !== MergeQueueStatus.resolving || resolution === null) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: it waits on no resolver`);
  const task = state.tasks.get(resolution.taskId);
  if (task !== undefined && !isTerminalDelegatedTaskStatus(task.status)) return reject(RejectionCode.mergeEntryNotOpen, `the resolver of merge queue entry ${entry.entryId} is still ${task.status}`);
  if (task?.status !== "completed") {
    const reason = `the resolver thread ${resolution.threadId} ended ${task?.status ?? "deleted"} without resolving the merge; the parent was not changed`;
    const failed: MergeQueueEntry = {
      ...entry,
      status: MergeQueueStatus.failed,
      resolution: { ...resolution, status: "failed" },
      failure: { code: "workspace_conflict", message: reason, workspaceCode: resolution.workspaceCode, files: resolution.files, check: resolution.check },
      endedAt: ctx.now,
      log: [...entry.log, `${ctx.now} refused: ${reason}`],
    };
    const next = nextQueued(state, entry.parentThreadId, entry.entryId);
    return accept([mergeQueueEvent(failed)], next === undefined ? [] : [mergeEffect(next)]);
  }
  const requeued: MergeQueueEntry = {
    ...entry,
    status: MergeQueueStatus.queued,
    resolution: { ...resolution, status: "resolved" },
    log: [...entry.log, `${ctx.now} the resolver ended; queued again to merge its branch`],
  };
  // Still the head: its merge begins now.
  return accept([mergeQueueEvent(requeued)], [mergeEffect(requeued)]);
}
