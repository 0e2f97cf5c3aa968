import type { ClientRequestRecord } from "../contracts/entities/clientRequests.js";
import type { ContextHandoff, ContextTransfer } from "../contracts/entities/contextTransfers.js";
import type { Checkpoint, CheckpointScope } from "../contracts/entities/checkpoints.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { ProviderSession } from "../contracts/entities/projects.js";
import type { ProviderThread, ProviderTurn } from "../contracts/entities/providerRecords.js";
import type { ExecutionNode, Run, RunAttempt } from "../contracts/entities/runs.js";
import type { Subagent } from "../contracts/entities/subagents.js";
import type { RuntimeRequest } from "../contracts/entities/runtimeRequests.js";
import type { ScheduledTask } from "../contracts/entities/scheduledTasks.js";
import type { Workflow } from "../contracts/entities/workflows.js";
import type { ToolTask } from "../contracts/entities/toolTasks.js";
import type { ProviderLimitWindow } from "../contracts/entities/limitWindows.js";
import type { MergeQueueEntry } from "../contracts/entities/mergeQueue.js";
import type { DomainEvent } from "../contracts/events.js";
import type { AppThread } from "../contracts/thread.js";
import type { TurnItem } from "../contracts/turnItems.js";

/**
 * The state decide reads and evolve folds events into. It is the engine's
 * in-memory read model too: one fold serves decisions and projections.
 *
 * evolve updates the state in place and returns it: folding a million events
 * through copied maps would be quadratic. It performs no I/O and depends on
 * nothing but its inputs, so given/when/then tests fold fresh states.
 */
export interface OrchestrationState {
  readonly threads: Map<string, AppThread>;
  readonly runs: Map<string, Run>;
  /** Run ids per thread in ordinal order. */
  readonly threadRuns: Map<string, string[]>;
  readonly attempts: Map<string, RunAttempt>;
  /** Attempt ids per run in ordinal order. */
  readonly runAttempts: Map<string, string[]>;
  readonly providerThreads: Map<string, ProviderThread>;
  readonly providerTurns: Map<string, ProviderTurn>;
  /** Each thread's timeline; an item's index is its `position`. */
  readonly turnItems: Map<string, TurnItem[]>;
  /** Item id → thread id, to upsert an item in place. */
  readonly itemThreads: Map<string, string>;
  readonly runtimeRequests: Map<string, RuntimeRequest>;
  readonly providerSessions: Map<string, ProviderSession>;
  readonly subagents: Map<string, Subagent>;
  /** Delegated tasks by taskId (= the parent's subagent id). */
  readonly tasks: Map<string, DelegatedTask>;
  /** Child thread id → the task that created it. */
  readonly taskByChildThread: Map<string, string>;
  readonly nodes: Map<string, ExecutionNode>;
  readonly transfers: Map<string, ContextTransfer>;
  /** First uses of clientRequestIds by key, with their request fingerprints. */
  readonly clientRequests: Map<string, ClientRequestRecord>;
  /** Transfer ids per thread, in creation order: those it received and those it sent. */
  readonly threadTransfers: Map<string, string[]>;
  /** Context handoffs (provider switches) by id. */
  readonly handoffs: Map<string, ContextHandoff>;
  /** Handoff ids per thread, in creation order. */
  readonly threadHandoffs: Map<string, string[]>;
  /** Per thread, the recorded waits still open: `tool_call` nodes in status `waiting`. */
  readonly openWaits: Map<string, Set<string>>;
  readonly checkpointScopes: Map<string, CheckpointScope>;
  readonly checkpoints: Map<string, Checkpoint>;
  /** Checkpoint ids per scope, in the order they were recorded. */
  readonly scopeCheckpoints: Map<string, string[]>;
  /** Scheduled tasks by id (deleted ones are removed). */
  readonly scheduledTasks: Map<string, ScheduledTask>;
  /** Run id → the scheduled task whose fire created it: a run's lineage back to its schedule. */
  readonly scheduledRuns: Map<string, string>;
  /** Workflow scripts by workflowId (docs/workflows.md). */
  readonly workflows: Map<string, Workflow>;
  /** Merge queue entries by entryId, of every parent, in the order they were queued (docs/workspaces.md, "The merge queue"). */
  readonly mergeQueueEntries: Map<string, MergeQueueEntry>;
  /** Tool calls served as MCP tasks, by task id (docs/mcp.md, "Tasks"). */
  readonly toolTasks: Map<string, ToolTask>;
  /** Each provider instance's latest usage limit window, by instance id (docs/limits.md); a passed reset is ignored by its readers. */
  readonly limitWindows: Map<string, ProviderLimitWindow>;
  /** Sequence of the last event folded in. */
  lastSequence: number;
}

/**
 * The fold's version, part of every state snapshot's version (engine
 * stateSnapshot.ts). Bump it whenever evolve folds any event differently or
 * a field's meaning changes: snapshots of the old fold are then discarded and
 * start-up replays the whole log. Adding or removing a field, or an event
 * type, changes the snapshot version by itself.
 */
export const STATE_FOLD_VERSION = 1;

export function initialState(): OrchestrationState {
  return {
    threads: new Map(),
    runs: new Map(),
    threadRuns: new Map(),
    attempts: new Map(),
    runAttempts: new Map(),
    providerThreads: new Map(),
    providerTurns: new Map(),
    turnItems: new Map(),
    itemThreads: new Map(),
    runtimeRequests: new Map(),
    providerSessions: new Map(),
    subagents: new Map(),
    tasks: new Map(),
    taskByChildThread: new Map(),
    nodes: new Map(),
    transfers: new Map(),
    clientRequests: new Map(),
    threadTransfers: new Map(),
    handoffs: new Map(),
    threadHandoffs: new Map(),
    openWaits: new Map(),
    checkpointScopes: new Map(),
    checkpoints: new Map(),
    scopeCheckpoints: new Map(),
    scheduledTasks: new Map(),
    scheduledRuns: new Map(),
    workflows: new Map(),
    mergeQueueEntries: new Map(),
    toolTasks: new Map(),
    limitWindows: new Map(),
    lastSequence: 0,
  };
}

export function evolve(state: OrchestrationState, event: DomainEvent): OrchestrationState {
  switch (event.type) {
    case "thread.created":
    case "thread.archived":
    case "thread.unarchived":
    case "thread.deleted":
    case "thread.settled":
    case "thread.unsettled":
    case "thread.snoozed":
    case "thread.unsnoozed":
    case "thread.pinned":
    case "thread.auto-settle-set":
    case "thread.unpinned":
    case "thread.pin-reordered":
    case "thread.active-reordered":
    case "thread.visited":
    case "thread.marked-unread":
    case "thread.metadata-updated":
    case "thread.pull-request-link-updated":
    case "thread.pull-request-synced":
    case "thread.runtime-mode-updated":
    case "thread.interaction-mode-updated":
    case "thread.model-selection-updated":
    case "thread.provider-switched":
    case "thread.guest-share-updated":
    case "thread.limit-recovery-updated":
    case "thread.background-tasks-updated":
    case "run.background-work-cancelled":
      state.threads.set(event.data.thread.id, event.data.thread);
      return state;
    case "run.created":
    case "run.updated":
      applyRun(state, event.data.run);
      return state;
    case "run-attempt.created":
    case "run-attempt.updated":
      applyAttempt(state, event.data.attempt);
      return state;
    case "provider-thread.updated":
      state.providerThreads.set(event.data.providerThread.id, event.data.providerThread);
      return state;
    case "provider-turn.updated":
      state.providerTurns.set(event.data.providerTurn.id, event.data.providerTurn);
      return state;
    case "turn-item.updated":
      applyTurnItem(state, event.data.item);
      return state;
    case "message.updated":
    case "plan.updated":
      // The entity's state is its turn item's, committed beside it (turn-item.updated).
      return state;
    case "runtime-request.updated":
      state.runtimeRequests.set(event.data.request.id, event.data.request);
      return state;
    case "provider-session.attached":
    case "provider-session.updated":
    case "provider-session.detached":
      state.providerSessions.set(event.data.session.id, event.data.session);
      return state;
    case "subagent.updated":
      state.subagents.set(event.data.subagent.id, event.data.subagent);
      if (event.data.task !== null) {
        state.tasks.set(event.data.task.taskId, event.data.task);
        state.taskByChildThread.set(event.data.task.childThreadId, event.data.task.taskId);
      }
      return state;
    case "node.updated":
      state.nodes.set(event.data.node.id, event.data.node);
      indexWait(state, event.data.node);
      return state;
    case "context-transfer.created":
    case "context-transfer.updated":
      if (!state.transfers.has(event.data.transfer.id)) indexTransfer(state, event.data.transfer);
      state.transfers.set(event.data.transfer.id, event.data.transfer);
      return state;
    case "client-request.recorded":
      state.clientRequests.set(event.data.clientRequest.key, event.data.clientRequest);
      return state;
    case "context-handoff.updated":
      if (!state.handoffs.has(event.data.handoff.id)) appendTo(state.threadHandoffs, event.data.handoff.threadId, event.data.handoff.id);
      state.handoffs.set(event.data.handoff.id, event.data.handoff);
      return state;
    case "checkpoint-scope.created":
      state.checkpointScopes.set(event.data.scope.id, event.data.scope);
      return state;
    case "checkpoint.captured":
      applyCheckpoint(state, event.data.checkpoint);
      return state;
    case "checkpoint.rollback-requested":
      // The request is history; the rollback_recovery run it created carries its progress.
      return state;
    case "scheduled-task.updated":
      state.scheduledTasks.set(event.data.task.id, event.data.task);
      if (event.data.fire?.runId != null) state.scheduledRuns.set(event.data.fire.runId, event.data.task.id);
      return state;
    case "scheduled-task.deleted":
      state.scheduledTasks.delete(event.data.task.id);
      return state;
    case "workflow.updated":
      state.workflows.set(event.data.workflow.workflowId, event.data.workflow);
      return state;
    case "merge-queue.entry-updated":
      state.mergeQueueEntries.set(event.data.entry.entryId, event.data.entry);
      return state;
    case "tool-task.updated":
      state.toolTasks.set(event.data.task.taskId, event.data.task);
      return state;
    case "provider-instance.limit-window-updated":
      state.limitWindows.set(event.data.window.providerInstanceId, event.data.window);
      return state;
    case "workflow.step.updated": {
      const workflow = state.workflows.get(event.data.workflowId);
      if (workflow === undefined) return state;
      const steps = [...workflow.steps];
      steps[event.data.step.index - 1] = event.data.step;
      state.workflows.set(workflow.workflowId, { ...workflow, steps, updatedAt: event.data.updatedAt });
      return state;
    }
    case "unknown":
      return state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
}

function appendTo(index: Map<string, string[]>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids === undefined) index.set(key, [id]);
  else ids.push(id);
}

function indexTransfer(state: OrchestrationState, transfer: ContextTransfer): void {
  appendTo(state.threadTransfers, transfer.threadId, transfer.id);
  if (transfer.sourceThreadId !== transfer.threadId) appendTo(state.threadTransfers, transfer.sourceThreadId, transfer.id);
}

/** A recorded wait is a `tool_call` node in status `waiting`; it stays open until the node leaves that status. */
function indexWait(state: OrchestrationState, node: ExecutionNode): void {
  if (node.kind !== "tool_call") return;
  const open = state.openWaits.get(node.threadId);
  if (node.status === "waiting") {
    if (open === undefined) state.openWaits.set(node.threadId, new Set([node.id]));
    else open.add(node.id);
  } else if (open !== undefined) {
    open.delete(node.id);
    if (open.size === 0) state.openWaits.delete(node.threadId);
  }
}

function applyRun(state: OrchestrationState, run: Run): void {
  const previous = state.runs.get(run.id);
  state.runs.set(run.id, run);
  if (previous === undefined) {
    const ids = state.threadRuns.get(run.threadId);
    if (ids === undefined) state.threadRuns.set(run.threadId, [run.id]);
    else ids.push(run.id);
  }
  // The thread's queue is derived from its runs' queue fields.
  if ((previous?.queueRank ?? null) !== run.queueRank || (previous?.held ?? false) !== run.held) {
    const thread = state.threads.get(run.threadId);
    if (thread !== undefined) state.threads.set(thread.id, { ...thread, queuedRuns: queuedRunsOf(state, thread.id) });
  }
}

function applyCheckpoint(state: OrchestrationState, checkpoint: Checkpoint): void {
  if (!state.checkpoints.has(checkpoint.id)) {
    const ids = state.scopeCheckpoints.get(checkpoint.scopeId);
    if (ids === undefined) state.scopeCheckpoints.set(checkpoint.scopeId, [checkpoint.id]);
    else ids.push(checkpoint.id);
  }
  state.checkpoints.set(checkpoint.id, checkpoint);
}

function applyAttempt(state: OrchestrationState, attempt: RunAttempt): void {
  if (!state.attempts.has(attempt.id)) {
    const ids = state.runAttempts.get(attempt.runId);
    if (ids === undefined) state.runAttempts.set(attempt.runId, [attempt.id]);
    else ids.push(attempt.id);
  }
  state.attempts.set(attempt.id, attempt);
}

/** The thread's queued runs in queue order. */
export function queuedRunsOf(state: OrchestrationState, threadId: string): { runId: string; held: boolean }[] {
  const queued: Run[] = [];
  for (const id of state.threadRuns.get(threadId) ?? []) {
    const run = state.runs.get(id);
    if (run !== undefined && run.queueRank !== null) queued.push(run);
  }
  queued.sort((a, b) => a.queueRank! - b.queueRank!);
  return queued.map((run) => ({ runId: run.id, held: run.held }));
}

function applyTurnItem(state: OrchestrationState, item: TurnItem): void {
  let items = state.turnItems.get(item.threadId);
  if (items === undefined) {
    items = [];
    state.turnItems.set(item.threadId, items);
  }
  items[item.position] = item;
  state.itemThreads.set(item.id, item.threadId);
}
