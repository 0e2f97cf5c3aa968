import type { DelegatedTaskRequestCommand } from "../../contracts/commands/delegationCommands.js";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import type { TurnEndStatus } from "../../contracts/providerEvents.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { Command } from "../../contracts/commands.js";
import { DEFAULT_DELEGATION_LIMITS, type DecideContext, type DelegationLimits } from "../decision.js";
import { makeAllocate } from "../ids.js";
import { type OrchestrationState, evolve, initialState } from "../state.js";
import { cmd, existing } from "./fixtures.js";
import { aProviderThread, aRun, aUserMessage, itemEvent, runCreated } from "./runFixtures.js";
import { TEST_NOW, TEST_PROVIDERS, given } from "./scenario.js";

/**
 * Fixtures for delegation tests: a root thread with a running turn, a
 * delegated_task.request with readable ids, contexts whose ids say which step
 * allocated them, and short helpers that drive a history step by step.
 */

/** The root thread every delegation test starts from, and its running turn. */
export const ROOT = "thread:root";
export const ROOT_RUN = "run:root";
/** When setup steps happen: half an hour before TEST_NOW. */
export const SETUP_AT = "2026-03-01T11:30:00.000Z";

/**
 * A decide context whose ids read `<prefix>:<label>-<n>` (n counts from 1
 * across every kind), so ids a setup context allocated never collide with the
 * ones the decision under test allocates. Limits default to DEFAULT_DELEGATION_LIMITS.
 */
export function labelledContext(label: string, options: { now?: string; limits?: Partial<DelegationLimits> } = {}): DecideContext {
  let counter = 0;
  const uuid = (): string => {
    counter += 1;
    return `${label}-${counter}`;
  };
  return {
    now: options.now ?? TEST_NOW,
    allocate: makeAllocate(uuid),
    providers: (id) => TEST_PROVIDERS[id] ?? null,
    limits: { ...DEFAULT_DELEGATION_LIMITS, ...options.limits },
  };
}

/** The n-th id labelledContext(label) allocates: `labelled("w", "turn-item", 3)` = "turn-item:w-3". */
export function labelled(label: string, prefix: string, n: number): string {
  return `${prefix}:${label}-${n}`;
}

/** The setup context: ids `<prefix>:s-<n>`, clock SETUP_AT. */
export function setupContext(limits: Partial<DelegationLimits> = {}): DecideContext {
  return labelledContext("s", { now: SETUP_AT, limits });
}

/** The root thread (steerable by default) with a running turn whose message is item 0. */
export function rootWithRun(provider = "steerable", overrides: Partial<AppThread> = {}): DomainEvent[] {
  const root = aProviderThread(ROOT, provider, { projectId: "project:9", worktreePath: "/repo/wt", branch: "feature/x", ...overrides });
  return [existing(root), runCreated(aRun(root, { id: ROOT_RUN, messageId: "message:root" })), itemEvent(aUserMessage(ROOT, ROOT_RUN, 0, "turn-item:root", "message:root", "plan the work"))];
}

/** The ids of task `name`: subagent:<name>, thread:<name>, run:<name>, message:<name>. */
export function taskIds(name: string) {
  return { taskId: `subagent:${name}`, childThreadId: `thread:${name}`, childRunId: `run:${name}`, childMessageId: `message:${name}` };
}

/** delegated_task.request for task `name` from `parentRunId` of `parentThreadId`, on the steerable provider by default. */
export function delegate(
  name: string,
  parentThreadId: string = ROOT,
  parentRunId: string = ROOT_RUN,
  overrides: Partial<DelegatedTaskRequestCommand["data"]> = {},
): DelegatedTaskRequestCommand {
  return cmd("delegated_task.request", {
    ...taskIds(name),
    parentThreadId,
    parentRunId,
    task: `Do ${name}`,
    prompt: `Do ${name}`,
    title: `Task ${name}`,
    role: null,
    mode: "async",
    providerInstanceId: "steerable",
    model: "m1",
    runtimeMode: "full-access",
    interactionMode: "default",
    clientRequestId: null,
    ...overrides,
  });
}

/** workflow.start of `workflowId` on the root's running turn, with `budget` as its pool. */
export function startWorkflow(workflowId: string, budget: BudgetLimits | null = null): Command {
  return cmd("workflow.start", {
    workflowId,
    parentThreadId: ROOT,
    parentRunId: ROOT_RUN,
    itemId: `turn-item:${workflowId}`,
    name: null,
    description: null,
    phases: [],
    script: "await agent('a')",
    args: null,
    budget,
    clientRequestId: null,
  });
}

/** Decide `command` on `history` with `ctx`, expect acceptance, and return the longer history. */
export function step(history: readonly DomainEvent[], command: Command, ctx: DecideContext): DomainEvent[] {
  return given(...history).when(command, ctx).thenHistory();
}

/** Decide each command in turn (all must be accepted). */
export function steps(history: readonly DomainEvent[], commands: readonly Command[], ctx: DecideContext): DomainEvent[] {
  return commands.reduce<DomainEvent[]>((events, command) => step(events, command, ctx), [...history]);
}

/** The state a history folds into. */
export function fold(history: readonly DomainEvent[]): OrchestrationState {
  const state = initialState();
  for (const event of history) evolve(state, event);
  return state;
}

/** The provider reports an assistant message of `runId`. */
export function says(threadId: string, runId: string, nativeItemId: string, text: string): Command {
  return cmd("provider-runtime.item-completed", { threadId, runId, driver: "scripted", nativeItemId, item: { kind: "assistant_message", text } });
}

/** The provider reports the turn of `runId` over. */
export function turnEnds(threadId: string, runId: string, status: TurnEndStatus = "completed", error: string | null = null): Command {
  return cmd("provider-runtime.turn-completed", { threadId, runId, status, error });
}

/** The provider's last word on `runId`, then its turn ends. */
export function finish(threadId: string, runId: string, text: string, status: TurnEndStatus = "completed", error: string | null = null): Command[] {
  return [says(threadId, runId, `final-${runId}`, text), turnEnds(threadId, runId, status, error)];
}

/** The provider asks a question in `runId` (a pending user_input request). */
export function asks(threadId: string, runId: string, nativeRequestId: string, question: string): Command {
  return cmd("provider-runtime.item-completed", {
    threadId,
    runId,
    driver: "scripted",
    nativeItemId: `item-${nativeRequestId}`,
    item: { kind: "user_input_request", requestId: nativeRequestId, questions: [{ id: "q1", question }] },
  });
}

/** delegated-task.deliver-notice for a task's completion. */
export function deliverCompletion(taskId: string): Command {
  return cmd("delegated-task.deliver-notice", { taskId, kind: "completion", requestId: null });
}

/** delegated-task.deliver-notice for a child's question. */
export function deliverQuestion(taskId: string, requestId: string | null): Command {
  return cmd("delegated-task.deliver-notice", { taskId, kind: "question", requestId });
}

/** The id of the thread's (only) pending request. */
export function pendingRequestId(history: readonly DomainEvent[], threadId: string): string {
  const request = [...fold(history).runtimeRequests.values()].find((candidate) => candidate.threadId === threadId && candidate.status === "pending");
  if (request === undefined) throw new Error(`thread ${threadId} has no pending request`);
  return request.id;
}

/** A deterministic shuffle (mulberry32), so a "random" order is the same on every run. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Every ordering of `items`. */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}
