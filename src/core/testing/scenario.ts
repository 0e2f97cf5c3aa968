import { type Command, decodeCommand } from "../../contracts/commands.js";
import type { NewEvent, NewOutboxEffect, Rejection } from "../../contracts/envelopes.js";
import { type DomainEvent, type DomainEventOf, type EventData, type EventType, type KnownDomainEvent, type ThreadEventData, decodeDomainEvent } from "../../contracts/events.js";
import { decide } from "../decider.js";
import { DEFAULT_DELEGATION_LIMITS, type DecideContext, type Decision, type ProviderFacts } from "../decision.js";
import { makeAllocate } from "../ids.js";
import type { RejectionCode } from "../rejections.js";
import { type OrchestrationState, evolve, initialState } from "../state.js";

/**
 * Given/when/then for the pure decider (STYLE.md rule 2): fold the given
 * events into a fresh state, decide one command with a fixed clock and a
 * counting id source, then compare the exact events or the rejection code.
 * No I/O and no test-runner import, so it works under any runner; a mismatch
 * throws a ScenarioMismatch that carries actual/expected for a diff.
 *
 *   given(threadEvent("thread.created", t)).when(archive(t.id)).then([threadEvent("thread.archived", {...})]);
 */

/** The fixed decision time of every scenario unless a test passes its own ctx. */
export const TEST_NOW = "2026-03-01T12:00:00.000Z";

/** Capabilities of the test providers: `steerable` can do everything, `plain` can only be interrupted, `stubborn` nothing. */
export const TEST_PROVIDERS: Readonly<Record<string, ProviderFacts>> = {
  steerable: {
    driver: "scripted",
    capabilities: { steering: true, interrupt: true, restart: true, fork: false, resume: false, runtimeModes: ["approval-required", "auto-accept-edits", "full-access"], models: ["m1"], mcpTransport: "http" },
  },
  plain: {
    driver: "scripted",
    capabilities: { steering: false, interrupt: true, restart: false, fork: false, resume: false, runtimeModes: ["approval-required"], models: ["m1"], mcpTransport: "http" },
  },
  stubborn: {
    driver: "scripted",
    capabilities: { steering: false, interrupt: false, restart: false, fork: false, resume: false, runtimeModes: ["approval-required"], models: [], mcpTransport: "none" },
  },
};

/** A context whose clock reads `now` and whose ids are uuid-shaped counters: ...-000000000001, -000000000002, ... */
export function testContext(now: string = TEST_NOW): DecideContext {
  let counter = 0;
  const uuid = (): string => {
    counter += 1;
    return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`;
  };
  return { now, allocate: makeAllocate(uuid), providers: (id) => TEST_PROVIDERS[id] ?? null, limits: DEFAULT_DELEGATION_LIMITS };
}

/** A failed expectation. `showDiff`, `actual` and `expected` let vitest (and chai-style reporters) print a diff. */
export class ScenarioMismatch extends Error {
  readonly showDiff = true;
  constructor(
    message: string,
    readonly actual: unknown,
    readonly expected: unknown,
  ) {
    super(message);
    this.name = "ScenarioMismatch";
  }
}

export interface Scenario {
  /** The decision, for assertions the helpers below do not cover. */
  readonly decision: Decision;
  /**
   * Expect acceptance with exactly these events (and effects, none by
   * default). Returns the state with the events folded in.
   */
  then(expected: readonly NewEvent[], expectedEffects?: readonly NewOutboxEffect[]): OrchestrationState;
  /** Expect a rejection with this code. Returns the rejection, e.g. to check its message. */
  thenRejects(code: RejectionCode): Rejection;
  /**
   * Expect acceptance, whatever the events, and return the given history plus
   * this decision's events: the `given` of a next step. Pass the same ctx to
   * every step so allocated ids keep counting.
   */
  thenHistory(): DomainEvent[];
  /** Expect acceptance with `expected` among the events (for one fact of a larger decision). Returns the folded state. */
  thenIncludes(expected: NewEvent): OrchestrationState;
}

/** The state a history folds into. */
export function fold(...history: readonly DomainEvent[]): OrchestrationState {
  const state = initialState();
  for (const event of history) evolve(state, event);
  return state;
}

export interface Given {
  /** Decide `command`, which must decode through its schema as itself (contracts/commands.ts). */
  when(command: Command, ctx?: DecideContext): Scenario;
  /** Decide a command its schema refuses: the decider's own guards, for a caller that did not parse it. */
  whenUnparsed(command: unknown, ctx?: DecideContext): Scenario;
}

export function given(...history: readonly DomainEvent[]): Given {
  return {
    when(command: Command, ctx: DecideContext = testContext()): Scenario {
      checkedCommand(command);
      return decideGiven(history, command, ctx);
    },
    whenUnparsed(command: unknown, ctx: DecideContext = testContext()): Scenario {
      return decideGiven(history, command as Command, ctx);
    },
  };
}

function decideGiven(history: readonly DomainEvent[], command: Command, ctx: DecideContext): Scenario {
  const state = initialState();
  for (const event of history) evolve(state, event);
  const before = snapshot(state);
  const decision = decide(state, command, ctx);
  if (!deepEqual(snapshot(state), before)) {
    throw new ScenarioMismatch(`decide mutated the state while deciding ${command.type}`, snapshot(state), before);
  }
  if (decision.kind === "accepted") decision.events.forEach(checkedEvent);
  return {
    decision,
    then(expected, expectedEffects = []) {
      if (decision.kind === "rejected") {
        throw new ScenarioMismatch(`expected ${command.type} to be accepted, it was rejected`, decision.rejection, expected);
      }
      if (!deepEqual(decision.events, expected)) {
        throw new ScenarioMismatch(`${command.type} emitted different events`, decision.events, expected);
      }
      if (!deepEqual(decision.effects, expectedEffects)) {
        throw new ScenarioMismatch(`${command.type} emitted different effects`, decision.effects, expectedEffects);
      }
      for (const event of decision.events) evolve(state, event);
      return state;
    },
    thenHistory() {
      if (decision.kind === "rejected") {
        throw new ScenarioMismatch(`expected ${command.type} to be accepted, it was rejected`, decision.rejection, "accepted");
      }
      return [...history, ...decision.events];
    },
    thenIncludes(expected) {
      if (decision.kind === "rejected") {
        throw new ScenarioMismatch(`expected ${command.type} to be accepted, it was rejected`, decision.rejection, expected);
      }
      if (!decision.events.some((event) => deepEqual(event, expected))) {
        throw new ScenarioMismatch(`${command.type} did not emit the expected event`, decision.events, expected);
      }
      for (const event of decision.events) evolve(state, event);
      return state;
    },
    thenRejects(code) {
      if (decision.kind === "accepted") {
        throw new ScenarioMismatch(`expected ${command.type} to be rejected with ${code}, it was accepted`, decision.events, code);
      }
      if (decision.rejection.code !== code) {
        throw new ScenarioMismatch(`${command.type} was rejected with another code`, decision.rejection.code, code);
      }
      return decision.rejection;
    },
  };
}

/** A command must decode through the command table as itself: what the engine could dispatch. */
function checkedCommand(command: Command): void {
  const stored: unknown = JSON.parse(JSON.stringify(command));
  const decoded = decodeCommand(command.type, stored);
  if (!decoded.success) throw new ScenarioMismatch(`${command.type} does not decode through its schema: ${decoded.error.message}`, stored, "a command of the table");
  if (!deepEqual(JSON.parse(JSON.stringify(decoded.data)), stored)) {
    throw new ScenarioMismatch(`${command.type} does not decode to itself: its schema drops or changes a field`, decoded.data, stored);
  }
}

/**
 * An emitted event must decode through the event table as a known event,
 * losing nothing the store would keep (its JSON), on the stream its entity
 * names: what the store and every reader would accept.
 */
function checkedEvent(event: KnownDomainEvent): void {
  const stored: unknown = JSON.parse(JSON.stringify(event));
  const decoded = decodeDomainEvent(stored);
  if (decoded.type === "unknown") {
    throw new ScenarioMismatch(`emitted an event of unknown type ${event.type}`, event.type, "a known event type");
  }
  if (!deepEqual(decoded, stored)) {
    throw new ScenarioMismatch(`${event.type} does not decode to itself: its schema drops or changes a field`, decoded, stored);
  }
  const owner = streamOwner(decoded);
  if (decoded.streamId !== owner) {
    throw new ScenarioMismatch(`${event.type} is on the wrong stream`, decoded.streamId, owner);
  }
}

const threadOwner = (data: ThreadEventData): string => data.thread.id;
const environmentWide = (): string => "";

/** The stream each event belongs to, read from the entity it carries: its thread, or "" for environment-wide events. */
const STREAM_OWNERS: { readonly [T in EventType]: (data: EventData<T>) => string } = {
  "thread.created": threadOwner,
  "thread.archived": threadOwner,
  "thread.unarchived": threadOwner,
  "thread.deleted": threadOwner,
  "thread.settled": threadOwner,
  "thread.unsettled": threadOwner,
  "thread.limit-recovery-updated": threadOwner,
  "provider-instance.limit-window-updated": environmentWide,
  "thread.background-tasks-updated": threadOwner,
  "thread.snoozed": threadOwner,
  "thread.unsnoozed": threadOwner,
  "thread.pinned": threadOwner,
  "thread.auto-settle-set": threadOwner,
  "thread.unpinned": threadOwner,
  "thread.pin-reordered": threadOwner,
  "thread.active-reordered": threadOwner,
  "thread.visited": threadOwner,
  "thread.marked-unread": threadOwner,
  "thread.metadata-updated": threadOwner,
  "thread.pull-request-synced": threadOwner,
  "thread.pull-request-link-updated": threadOwner,
  "thread.runtime-mode-updated": threadOwner,
  "thread.interaction-mode-updated": threadOwner,
  "thread.model-selection-updated": threadOwner,
  "thread.provider-switched": threadOwner,
  "thread.guest-share-updated": threadOwner,
  "run.created": (data) => data.run.threadId,
  "run.updated": (data) => data.run.threadId,
  "run.background-work-cancelled": (data) => data.thread.id,
  "run-attempt.created": (data) => data.attempt.threadId,
  "run-attempt.updated": (data) => data.attempt.threadId,
  "node.updated": (data) => data.node.threadId,
  "subagent.updated": (data) => data.subagent.threadId,
  "provider-session.attached": (data) => data.session.threadId,
  "provider-session.updated": (data) => data.session.threadId,
  "provider-session.detached": (data) => data.session.threadId,
  "provider-thread.updated": (data) => data.providerThread.threadId,
  "provider-turn.updated": (data) => data.providerTurn.threadId,
  "runtime-request.updated": (data) => data.request.threadId,
  "turn-item.updated": (data) => data.item.threadId,
  "message.updated": (data) => data.message.threadId,
  "plan.updated": (data) => data.plan.threadId,
  "checkpoint-scope.created": (data) => data.scope.threadId,
  "checkpoint.captured": (data) => data.checkpoint.threadId,
  "checkpoint.rollback-requested": (data) => data.rollback.threadId,
  "context-handoff.updated": (data) => data.handoff.threadId,
  "context-transfer.created": (data) => data.transfer.threadId,
  "context-transfer.updated": (data) => data.transfer.threadId,
  "client-request.recorded": environmentWide,
  "scheduled-task.updated": environmentWide,
  "scheduled-task.deleted": environmentWide,
  "workflow.updated": (data) => data.workflow.parentThreadId,
  "merge-queue.entry-updated": (data) => data.entry.parentThreadId,
  "workflow.step.updated": (data) => data.parentThreadId,
  "tool-task.updated": (data) => data.task.ownerThreadId ?? "",
};

function streamOwner<T extends EventType>(event: DomainEventOf<T>): string {
  return STREAM_OWNERS[event.type](event.data);
}

function snapshot(state: OrchestrationState): unknown {
  return {
    threads: [...state.threads.entries()],
    runs: [...state.runs.entries()],
    items: [...state.turnItems.entries()],
    requests: [...state.runtimeRequests.entries()],
    sessions: [...state.providerSessions.entries()],
    subagents: [...state.subagents.entries()],
    tasks: [...state.tasks.entries()],
    nodes: [...state.nodes.entries()],
    transfers: [...state.transfers.entries()],
    handoffs: [...state.handoffs.entries()],
    attempts: [...state.attempts.entries()],
    providerThreads: [...state.providerThreads.entries()],
    providerTurns: [...state.providerTurns.entries()],
    checkpointScopes: [...state.checkpointScopes.entries()],
    checkpoints: [...state.checkpoints.entries()],
    scheduledTasks: [...state.scheduledTasks.entries()],
    lastSequence: state.lastSequence,
  };
}

/** Structural equality for plain data; unlike a JSON comparison, `{ a: undefined }` differs from `{}`. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  const bRecord = b as Record<string, unknown>;
  const aRecord = a as Record<string, unknown>;
  return aKeys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(aRecord[key], bRecord[key]));
}
