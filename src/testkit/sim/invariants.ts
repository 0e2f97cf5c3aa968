import { isDeepStrictEqual } from "node:util";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { isTerminalRunAttemptStatus, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type DelegatedTask, isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { interactionModeRank, runtimeModeRank } from "../../contracts/modes.js";
import type { DelegationLimits } from "../../core/decision.js";
import type { OrchestrationState } from "../../core/state.js";
import { checkBudgets } from "./budgetLedger.js";
import { budgetPolicy, exhaustedBudget, treeThreads } from "../../core/budgets/budgets.js";
import { pausedBudget } from "../../core/budgets/workflowBudget.js";
import type { ReceivedInput } from "./simDriver.js";

/** What delegate_task answered a simulated agent. */
export interface DelegationRecord {
  readonly parentThreadId: string;
  readonly clientRequestId: string | undefined;
  readonly taskId: string;
}

/** Everything an invariant may read. */
export interface InvariantView {
  /** The live state of the node that is up. */
  readonly state: OrchestrationState;
  /** Every event the store committed, in commit order, as the simulator observed the commits. */
  readonly log: readonly StoredEvent[];
  /** Every input a simulated provider received. */
  readonly received: readonly ReceivedInput[];
  readonly delegations: readonly DelegationRecord[];
  /** Commands whose decision threw (stored as orchestration_error). */
  readonly deciderFailures: readonly string[];
  readonly limits: DelegationLimits;
  /** Quiet checks only: the log as the store reads it back, and a fresh fold of it. */
  readonly stored: readonly StoredEvent[] | null;
  readonly replayed: OrchestrationState | null;
}

/** Problems found, each one sentence; empty when the invariant holds. */
export type InvariantCheck = (view: InvariantView) => string[];

export interface InvariantSpec {
  /** always: after every step of the run; quiet: once the system has drained. */
  readonly when: "always" | "quiet";
  readonly summary: string;
  /**
   * The check, or null for an extension point whose feature does not exist
   * yet: the runner reports it as pending and a caller may plug a check in
   * (SimOptions.invariantChecks) without touching the table.
   */
  readonly check: InvariantCheck | null;
  /** Why the check is null. */
  readonly pending?: string;
}

const COMPLETION_MARKER = /\(taskId (\S+), child thread /;

interface DeliveryHistory {
  /** Tasks whose pending result a call took (task_status, or a wait's end): acknowledged, not notified. */
  readonly acknowledgedByCall: Set<string>;
  /** Completion notices that went out while a recorded wait held the task, which was handing the result over. */
  readonly noticedWhileHeld: string[];
}

/** Read the log's task versions in order: what took each result, and what went out while a wait held its task. */
function deliveryHistory(log: readonly StoredEvent[]): DeliveryHistory {
  const acknowledgedByCall = new Set<string>();
  const noticedWhileHeld: string[] = [];
  const previous = new Map<string, DelegatedTask>();
  for (const event of log) {
    if (event.type !== "subagent.updated") continue;
    const task = (event.data as { task: DelegatedTask | null }).task;
    if (task === null) continue;
    const before = previous.get(task.taskId);
    previous.set(task.taskId, task);
    const byCall = event.commandId.startsWith("cmd:ack:") || event.commandId.startsWith("cmd:wait-release:");
    if (byCall && task.completionDelivery === "acknowledged" && before?.completionDelivery !== "acknowledged") acknowledgedByCall.add(task.taskId);
    const completions = (version: DelegatedTask | undefined) => version?.notices.filter((notice) => notice.kind === "completion").length ?? 0;
    if (completions(task) > completions(before) && (before?.heldBy?.length ?? 0) > 0) {
      noticedWhileHeld.push(`task ${task.taskId}'s result went out as a notice (${event.commandId}) while wait ${before!.heldBy![0]!.waitId} held it`);
    }
  }
  return { acknowledgedByCall, noticedWhileHeld };
}

/** A task whose tree is paused on budget by design: some thread of it has a queued turn that a spent pausing budget holds back until a raise. */
function waitsForRaise(state: OrchestrationState, task: DelegatedTask, now: string): boolean {
  return treeThreads(state, task.childThreadId).some((threadId) => {
    const queued = (state.threadRuns.get(threadId) ?? []).some((runId) => state.runs.get(runId)?.status === "queued");
    const exhausted = queued ? exhaustedBudget(state, threadId, now) : null;
    return exhausted !== null && budgetPolicy(exhausted.holder) === "pause";
  });
}

/** Run end reasons that lose the run's agent with its process: what it received there never led anywhere. */
const LOST_END_REASONS: ReadonlySet<string> = new Set(["server_restarted", "node_lost", "session_crashed", "session_server_restarted", "session_shutdown"]);

/**
 * Whether an input reached an agent whose work on it was lost with its
 * process: the run ended with a loss, or the attempt that received it was
 * abandoned and the run started again (docs/runs.md, "Work after a crash").
 * Loom sends such a notice again (a lost notice, or the resumed run's same
 * input), so only receipts in attempts that went on count as deliveries.
 */
function receivedInLostAttempt(state: OrchestrationState, input: ReceivedInput): boolean {
  const run = state.runs.get(input.runId);
  if (run === undefined) return false;
  if (run.status === "interrupted" && run.endReason !== null && LOST_END_REASONS.has(run.endReason)) return true;
  for (const attemptId of state.runAttempts.get(run.id) ?? []) {
    const attempt = state.attempts.get(attemptId);
    if (attempt?.providerSessionId === input.providerSessionId && attempt.status === "abandoned") return true;
  }
  return false;
}

function receivedByThread(received: readonly ReceivedInput[]): Map<string, Set<string>> {
  const byThread = new Map<string, Set<string>>();
  for (const input of received) {
    let texts = byThread.get(input.threadId);
    if (texts === undefined) byThread.set(input.threadId, (texts = new Set()));
    texts.add(input.text);
    // A message after Loom's context (a handoff, a transfer, the recap of a resumed thread) reached the agent too.
    const close = "</loom_context>\n\n";
    if (input.text.startsWith("<loom_context>") && input.text.includes(close)) texts.add(input.text.slice(input.text.indexOf(close) + close.length));
  }
  return byThread;
}

export const INVARIANTS = {
  "sequence-gap-free": {
    when: "always",
    summary: "the event log's sequences run 1, 2, 3, … with no gap or repeat; at quiet the store reads back exactly what was committed",
    check({ log, stored }) {
      const problems: string[] = [];
      const at = log.findIndex((event, index) => event.sequence !== index + 1);
      if (at >= 0) problems.push(`event at index ${at} has sequence ${log[at]!.sequence}`);
      if (stored !== null) {
        const same = stored.length === log.length && stored.every((event, index) => event.eventId === log[index]!.eventId && event.sequence === log[index]!.sequence);
        if (!same) problems.push(`the store reads back ${stored.length} events, ${log.length} were committed`);
      }
      return problems;
    },
  },
  "read-model-equals-replay": {
    when: "quiet",
    summary: "the live state equals a fresh fold of the store's events with core's evolve",
    check({ state, replayed }) {
      if (replayed === null) return [];
      // Turn items are compared thread by thread and item by item through the maps' reads: the live
      // state keeps only some threads' items in memory and reads the others from the store.
      const keys = (Object.keys(state) as (keyof OrchestrationState)[]).filter(
        (key) => key !== "turnItems" && key !== "itemThreads" && !isDeepStrictEqual(state[key], replayed[key]),
      );
      const threadIds = new Set([...state.threads.keys(), ...replayed.turnItems.keys()]);
      if ([...threadIds].some((threadId) => !isDeepStrictEqual(state.turnItems.get(threadId), replayed.turnItems.get(threadId)))) keys.push("turnItems");
      if ([...replayed.itemThreads].some(([itemId, threadId]) => state.itemThreads.get(itemId) !== threadId)) keys.push("itemThreads");
      return keys.length === 0 ? [] : [`the live state differs from a replay of the log in ${keys.join(", ")}`];
    },
  },
  "one-child-per-client-request": {
    when: "always",
    summary: "a clientRequestId never yields two tasks (children) of one parent thread, and every retry answers the same task",
    check({ state, delegations }) {
      const problems: string[] = [];
      const seen = new Map<string, string>();
      for (const task of state.tasks.values()) {
        if (task.clientRequestId === null) continue;
        const key = `${task.parentThreadId} ${task.clientRequestId}`;
        const first = seen.get(key);
        if (first !== undefined) problems.push(`clientRequestId ${task.clientRequestId} of ${task.parentThreadId} has two tasks: ${first} and ${task.taskId}`);
        seen.set(key, task.taskId);
      }
      const answered = new Map<string, string>();
      for (const record of delegations) {
        if (record.clientRequestId === undefined) continue;
        const key = `${record.parentThreadId} ${record.clientRequestId}`;
        const first = answered.get(key);
        if (first !== undefined && first !== record.taskId) problems.push(`delegate_task retries of ${record.clientRequestId} answered ${first} and ${record.taskId}`);
        answered.set(key, record.taskId);
      }
      return problems;
    },
  },
  "result-delivered-at-most-once": {
    when: "always",
    summary:
      "a task's result reaches its parent at most once: one completion notice, received once by the parent's agent (receipts in an attempt lost with its process, which Loom sends again, do not count), never both notified and handed over by a wait, never notified while a recorded wait holds the task (whichever node's reactor acts)",
    check({ state, log, received }) {
      const problems: string[] = [];
      const counts = new Map<string, number>();
      for (const input of received) {
        if (receivedInLostAttempt(state, input)) continue;
        const taskId = COMPLETION_MARKER.exec(input.text)?.[1];
        if (taskId !== undefined && state.tasks.get(taskId)?.parentThreadId === input.threadId) counts.set(taskId, (counts.get(taskId) ?? 0) + 1);
      }
      const history = deliveryHistory(log);
      const acked = history.acknowledgedByCall;
      problems.push(...history.noticedWhileHeld);
      for (const task of state.tasks.values()) {
        // A notice whose run was lost before its agent read it (a crash) is sent again: only the others count.
        const notices = task.notices.filter((notice) => notice.kind === "completion" && notice.lostAt === undefined).length;
        if (notices > 1) problems.push(`task ${task.taskId} has ${notices} completion notices`);
        const seen = counts.get(task.taskId) ?? 0;
        if (seen > 1) problems.push(`the parent agent received task ${task.taskId}'s result ${seen} times`);
        if (notices > 0 && acked.has(task.taskId)) problems.push(`task ${task.taskId}'s result was handed over by a wait or task_status and also delivered as a notice`);
      }
      return problems;
    },
  },
  "tasks-reach-terminal": {
    when: "quiet",
    summary:
      "once quiet, every delegated task is final: a terminal status and a published result; or its tree is paused on budget (onExceeded pause), with a queued turn waiting under a spent pausing budget for a raise",
    check({ state, log }) {
      const now = log.at(-1)?.occurredAt ?? new Date(0).toISOString();
      return [...state.tasks.values()]
        .filter((task) => task.resultContextTransferId === null || !isTerminalDelegatedTaskStatus(task.status))
        .filter((task) => !waitsForRaise(state, task, now))
        .map((task) => `task ${task.taskId} is still ${task.status} (child ${task.childThreadId})`);
    },
  },
  "workflows-reach-an-end": {
    when: "quiet",
    summary:
      "once quiet, every workflow script ran to its end (completed, failed or stopped); or it waits for a raise: a budget over its next agent() call pauses, or a running call's task is paused on budget",
    check({ state, log }) {
      const now = log.at(-1)?.occurredAt ?? new Date(0).toISOString();
      return [...state.workflows.values()]
        .filter((workflow) => workflow.status === "running" && pausedBudget(state, workflow, now) === null)
        .filter((workflow) => !workflow.steps.some((step) => {
          const task = step.status === "running" && step.taskId !== null ? state.tasks.get(step.taskId) : undefined;
          return task !== undefined && waitsForRaise(state, task, now);
        }))
        .map((workflow) => `workflow ${workflow.workflowId} is still running (${workflow.steps.filter((step) => step.status === "running").length} of its ${workflow.steps.length} agent() calls running)`);
    },
  },
  "result-never-lost": {
    when: "quiet",
    summary: "once quiet, every final task's result was delivered, acknowledged or disposed, never left pending",
    check({ state }) {
      return [...state.tasks.values()]
        .filter((task) => task.resultContextTransferId !== null && (task.completionDelivery === "pending" || task.completionDelivery === "not_ready"))
        .map((task) => `task ${task.taskId} is final but its delivery is still ${task.completionDelivery}`);
    },
  },
  "input-reaches-agent": {
    when: "quiet",
    summary: "a message (user, agent or notice) on a run that completed reached the provider, or was re-sent as a follow-up",
    check({ state, received }) {
      const problems: string[] = [];
      const byThread = receivedByThread(received);
      const messageIds = new Set<string>();
      // Every thread's items, through the state's map: threads whose items left memory are read from the store.
      const timelines = [...state.threads.keys()].map((threadId) => [threadId, state.turnItems.get(threadId) ?? []] as const);
      for (const [, items] of timelines) for (const item of items) if (item?.type === "user_message" && item.messageId !== null) messageIds.add(item.messageId);
      for (const [threadId, items] of timelines) {
        for (const item of items) {
          if (item?.type !== "user_message" || item.runId === null) continue;
          if (state.runs.get(item.runId)?.status !== "completed") continue;
          if (byThread.get(threadId)?.has(item.text) === true) continue;
          if (item.messageId !== null && messageIds.has(`${item.messageId}:resent`)) continue;
          problems.push(`message ${item.messageId ?? item.id} on completed run ${item.runId} of ${threadId} never reached the provider`);
        }
      }
      return problems;
    },
  },
  "run-driven-once": {
    when: "always",
    summary: "no run is driven by two sessions: at most one open attempt per run, none on a terminal run (the provider ledger checks live turns too)",
    check({ state }) {
      const problems: string[] = [];
      for (const [runId, attemptIds] of state.runAttempts) {
        const open = attemptIds.filter((id) => {
          const attempt = state.attempts.get(id);
          return attempt !== undefined && !isTerminalRunAttemptStatus(attempt.status);
        });
        if (open.length > 1) problems.push(`run ${runId} has ${open.length} open attempts`);
        const run = state.runs.get(runId);
        if (open.length > 0 && run !== undefined && isTerminalRunStatus(run.status)) problems.push(`run ${runId} is ${run.status} but attempt ${open[0]} is still open`);
      }
      return problems;
    },
  },
  "one-active-run-per-thread": {
    when: "always",
    summary: "a thread has at most one run between starting and its end",
    check({ state }) {
      const problems: string[] = [];
      for (const [threadId, runIds] of state.threadRuns) {
        const active = runIds.filter((id) => {
          const status = state.runs.get(id)?.status;
          return status !== undefined && status !== "queued" && !isTerminalRunStatus(status);
        });
        if (active.length > 1) problems.push(`thread ${threadId} has ${active.length} active runs: ${active.join(", ")}`);
      }
      return problems;
    },
  },
  "nothing-left-running": {
    when: "quiet",
    summary: "once quiet, no run is still starting, running or waiting",
    check({ state }) {
      return [...state.runs.values()].filter((run) => run.status !== "queued" && !isTerminalRunStatus(run.status)).map((run) => `run ${run.id} of ${run.threadId} is still ${run.status}`);
    },
  },
  "limited-work-never-stuck": {
    when: "quiet",
    summary:
      "once quiet, no thread waits on a usage limit whose reset has passed, and every run a usage limit stopped whose wait the resume or a failover ended was followed by a run on its thread (its work went on, on the same provider or another)",
    check({ state, log }) {
      const now = log.at(-1)?.occurredAt ?? new Date(0).toISOString();
      const problems: string[] = [];
      for (const thread of state.threads.values()) {
        const recovery = thread.limitRecovery ?? null;
        if (thread.deletedAt === null && recovery !== null && Date.parse(recovery.resetAt) <= Date.parse(now)) {
          problems.push(`thread ${thread.id} still waits on the usage limit that stopped run ${recovery.runId}, whose reset ${recovery.resetAt} has passed`);
        }
      }
      // Each recovery recorded, and the event that ended it.
      const waiting = new Map<string, string>();
      for (const event of log) {
        if (event.type !== "thread.limit-recovery-updated") continue;
        const thread = (event.data as { thread: { id: string; limitRecovery?: { runId: string } | null } }).thread;
        const recovery = thread.limitRecovery ?? null;
        if (recovery !== null) {
          waiting.set(thread.id, recovery.runId);
          continue;
        }
        const runId = waiting.get(thread.id);
        waiting.delete(thread.id);
        if (runId === undefined || !(event.commandId.startsWith("limit-resume:") || event.commandId.startsWith("limit-failover:"))) continue;
        const live = state.threads.get(thread.id);
        const stopped = state.runs.get(runId);
        if (live === undefined || live.deletedAt !== null || stopped === undefined) continue;
        const later = (state.threadRuns.get(thread.id) ?? []).some((id) => (state.runs.get(id)?.ordinal ?? 0) > stopped.ordinal);
        if (!later) problems.push(`run ${runId} of ${thread.id} was stopped by a usage limit and ${event.commandId.startsWith("limit-failover:") ? "moved" : "resumed"}, but no run followed it`);
      }
      return problems;
    },
  },
  "lineage-is-a-forest": {
    when: "always",
    summary: "threads form a forest: roots are their own root, every child's parent exists with the same root, each child has exactly its one task and subagent record",
    check({ state }) {
      const problems: string[] = [];
      for (const thread of state.threads.values()) {
        const lineage = thread.lineage;
        if (lineage.relation === "root") {
          if (lineage.parentThreadId !== null || lineage.rootThreadId !== thread.id) problems.push(`root ${thread.id} has parent ${lineage.parentThreadId} and root ${lineage.rootThreadId}`);
          continue;
        }
        const parent = lineage.parentThreadId === null ? undefined : state.threads.get(lineage.parentThreadId);
        if (parent === undefined) {
          problems.push(`thread ${thread.id}'s parent ${lineage.parentThreadId} does not exist`);
          continue;
        }
        if (parent.lineage.rootThreadId !== lineage.rootThreadId) problems.push(`thread ${thread.id} has root ${lineage.rootThreadId}, its parent ${parent.lineage.rootThreadId}`);
        let hops = 0;
        for (let at = parent; at.lineage.parentThreadId !== null && hops <= state.threads.size; hops++) {
          const up = state.threads.get(at.lineage.parentThreadId);
          if (up === undefined) break;
          at = up;
        }
        if (hops > state.threads.size) problems.push(`thread ${thread.id}'s ancestry has a cycle`);
        const taskId = state.taskByChildThread.get(thread.id);
        const task = taskId === undefined ? undefined : state.tasks.get(taskId);
        if (task === undefined) problems.push(`child thread ${thread.id} has no task`);
        else if (task.parentThreadId !== parent.id || task.childThreadId !== thread.id) problems.push(`task ${task.taskId} names parent ${task.parentThreadId} and child ${task.childThreadId}, lineage says ${parent.id}`);
      }
      for (const task of state.tasks.values()) {
        if (!state.threads.has(task.childThreadId)) problems.push(`task ${task.taskId}'s child thread ${task.childThreadId} does not exist`);
        const subagent = state.subagents.get(task.taskId);
        if (subagent === undefined || subagent.threadId !== task.parentThreadId || subagent.childThreadId !== task.childThreadId) problems.push(`task ${task.taskId} has no matching subagent record on its parent`);
        const parentTask = state.taskByChildThread.get(task.parentThreadId);
        const parentDepth = parentTask === undefined ? 0 : (state.tasks.get(parentTask)?.depth ?? 0);
        if (task.depth !== parentDepth + 1) problems.push(`task ${task.taskId} has depth ${task.depth} under a parent at depth ${parentDepth}`);
      }
      return problems;
    },
  },
  "privilege-never-widens": {
    when: "always",
    summary: "a child thread's runtime and interaction modes are never broader than its parent's",
    check({ state }) {
      const problems: string[] = [];
      for (const task of state.tasks.values()) {
        const parent = state.threads.get(task.parentThreadId);
        const child = state.threads.get(task.childThreadId);
        if (parent === undefined || child === undefined) continue;
        if (runtimeModeRank(child.runtimeMode) > runtimeModeRank(parent.runtimeMode)) problems.push(`child ${child.id} runs ${child.runtimeMode} under ${parent.runtimeMode}`);
        if (interactionModeRank(child.interactionMode) > interactionModeRank(parent.interactionMode)) problems.push(`child ${child.id} uses ${child.interactionMode} under ${parent.interactionMode}`);
      }
      return problems;
    },
  },
  "delegation-limits-hold": {
    when: "always",
    summary: "delegation depth and each root's spawn count stay within the configured limits",
    check({ state, limits }) {
      const problems: string[] = [];
      const spawns = new Map<string, number>();
      for (const task of state.tasks.values()) {
        if (task.depth > limits.maxDelegationDepth) problems.push(`task ${task.taskId} is at depth ${task.depth}`);
        const root = state.threads.get(task.parentThreadId)?.lineage.rootThreadId ?? "?";
        spawns.set(root, (spawns.get(root) ?? 0) + 1);
      }
      for (const [root, count] of spawns) if (count > limits.maxSpawnsPerRootThread) problems.push(`root ${root} spawned ${count} tasks`);
      return problems;
    },
  },
  "decisions-never-throw": {
    when: "always",
    summary: "the decider never throws (a throw is stored as orchestration_error)",
    check: ({ deciderFailures }) => deciderFailures.map((failure) => `deciding ${failure} threw`),
  },
  "budgets-never-exceeded": {
    when: "always",
    summary:
      "every task and turn under a budget started while it had room, so spawns and turns never pass their limits; once tokens or cost reach a limit, only the turns running then (and system follow-ups) add to them",
    check: ({ log }) => checkBudgets(log),
  },
} as const satisfies Record<string, InvariantSpec>;

export type InvariantName = keyof typeof INVARIANTS;
export const INVARIANT_NAMES = Object.keys(INVARIANTS) as InvariantName[];

/** Invariants found failing outside the table: by the provider ledger, or an app call that threw untyped. */
export const RUNTIME_INVARIANTS = ["run-driven-once", "typed-failures", "system-quiesces"] as const;
