import type { Command } from "../../contracts/commands.js";
import type { NewEvent, NewOutboxEffect, Rejection } from "../../contracts/envelopes.js";
import { type DomainEvent, decodeDomainEvent } from "../../contracts/events.js";
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

export function given(...history: readonly DomainEvent[]): { when(command: Command, ctx?: DecideContext): Scenario } {
  return {
    when(command: Command, ctx: DecideContext = testContext()): Scenario {
      const state = initialState();
      for (const event of history) evolve(state, event);
      const before = snapshot(state);
      const decision = decide(state, command, ctx);
      if (!deepEqual(snapshot(state), before)) {
        throw new ScenarioMismatch(`decide mutated the state while deciding ${command.type}`, snapshot(state), before);
      }
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
          for (const event of decision.events) evolve(state, checkedEvent(event));
          return state;
        },
        thenHistory() {
          if (decision.kind === "rejected") {
            throw new ScenarioMismatch(`expected ${command.type} to be accepted, it was rejected`, decision.rejection, "accepted");
          }
          return [...history, ...decision.events.map(checkedEvent)];
        },
        thenIncludes(expected) {
          if (decision.kind === "rejected") {
            throw new ScenarioMismatch(`expected ${command.type} to be accepted, it was rejected`, decision.rejection, expected);
          }
          if (!decision.events.some((event) => deepEqual(event, expected))) {
            throw new ScenarioMismatch(`${command.type} did not emit the expected event`, decision.events, expected);
          }
          for (const event of decision.events) evolve(state, checkedEvent(event));
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
    },
  };
}

/** An emitted event must decode as a known event whose stream is its thread: what the store would accept. */
function checkedEvent(event: NewEvent): DomainEvent {
  const decoded = decodeDomainEvent(event);
  if (decoded.type === "unknown") {
    throw new ScenarioMismatch(`emitted an event of unknown type ${event.type}`, event.type, "a known event type");
  }
  const owner = streamOwner(decoded);
  if (decoded.streamId !== owner) {
    throw new ScenarioMismatch(`${event.type} is on the wrong stream`, decoded.streamId, owner);
  }
  return decoded;
}

/** The thread an event belongs to, read from the entity it carries. */
function streamOwner(event: Exclude<DomainEvent, { type: "unknown" }>): string {
  const data = event.data;
  if ("clientRequest" in data || "fire" in data) return "";
  if ("thread" in data) return data.thread.id;
  if ("run" in data) return data.run.threadId;
  if ("item" in data) return data.item.threadId;
  if ("request" in data) return data.request.threadId;
  if ("subagent" in data) return data.subagent.threadId;
  if ("node" in data) return data.node.threadId;
  if ("transfer" in data) return data.transfer.threadId;
  if ("attempt" in data) return data.attempt.threadId;
  if ("providerThread" in data) return data.providerThread.threadId;
  if ("providerTurn" in data) return data.providerTurn.threadId;
  if ("handoff" in data) return data.handoff.threadId;
  if ("scope" in data) return data.scope.threadId;
  if ("checkpoint" in data) return data.checkpoint.threadId;
  if ("rollback" in data) return data.rollback.threadId;
  if ("workflow" in data) return data.workflow.parentThreadId;
  if ("step" in data) return data.parentThreadId;
  return data.session.threadId;
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
