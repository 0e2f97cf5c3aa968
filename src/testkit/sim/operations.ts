import type { AppContext } from "../../app/context.js";
import type { WorkflowRunner } from "../../app/workflows/runner.js";
import type { WaitContext } from "../../app/waits.js";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import type { OrchestrationState } from "../../core/state.js";
import type { SimRandom } from "./random.js";

/** What an operation gets from the world it runs in. */
export interface OperationWorld {
  readonly rng: SimRandom;
  /** The live state of the node that is up, or null while none is. */
  state(): OrchestrationState | null;
  /** The virtual clock's time, as the node's decisions read it. */
  now(): string;
  /** "active" while users and agents issue work; "quiet" while the system drains. */
  readonly phase: "active" | "quiet";
  /** Provider instances the simulation configures. */
  readonly instances: readonly string[];
  /** A number that never repeats in this run, for unique texts and client request ids. */
  next(): number;
  /**
   * Call the app layer on the node that is up (its context, and its workflow
   * runner for the workflow tools). A typed failure (AppError) is an answer;
   * anything else is a violation. Resolves never when the node dies during
   * the call, as a client of a killed server would see.
   */
  invoke<T>(operation: string, call: (app: AppContext, workflows: WorkflowRunner) => Promise<T>): Promise<Outcome<T>>;
  /** Client request ids an agent of this thread already used, for retries. */
  clientRequestIds(threadId: string): string[];
  /** Record what delegate_task returned, for the idempotency invariant. */
  recordDelegation(parentThreadId: string, clientRequestId: string | undefined, taskId: string): void;
}

export type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: string };

export function describeOutcome(outcome: Outcome<unknown>): string {
  return outcome.ok ? "ok" : `failed ${outcome.code}`;
}

/** Run the same call 1..n times at once (a client's retry storm); the outcomes in order. */
export function storm<T>(world: OperationWorld, maxCopies: number, call: () => Promise<Outcome<T>>): Promise<Outcome<T>[]> {
  const copies = world.rng.chance(0.25) ? world.rng.int(2, maxCopies) : 1;
  return Promise.all(Array.from({ length: copies }, () => call()));
}

/** A wait context of its own per call: nobody cancels it and nobody watches its progress. */
export function unobservedWait(): WaitContext {
  return { signal: new AbortController().signal, progress: () => Promise.resolve() };
}

/**
 * Small budgets, so the pools run out within a run and the work under them
 * contends for what is left: a root's (one to three kinds, sometimes a
 * policy), or a task's narrower one (one kind, sometimes wider than what it
 * inherits, which is refused).
 */
export function drawBudget(world: OperationWorld, scope: "root" | "task"): BudgetLimits {
  const rng = world.rng;
  if (scope === "task") {
    const kind = rng.pick(["spawns", "turns", "tokens"] as const);
    return kind === "spawns" ? { spawns: rng.int(0, 2) } : kind === "turns" ? { turns: rng.int(1, 3) } : { tokens: rng.int(100, 500) };
  }
  const budget: { -readonly [K in keyof BudgetLimits]: BudgetLimits[K] } = {};
  for (let kinds = rng.int(1, 3); kinds > 0; kinds--) {
    switch (rng.pick(["spawns", "turns", "tokens", "costUsd", "wallClockMs"] as const)) {
      case "spawns":
        budget.spawns = rng.int(1, 4);
        break;
      case "turns":
        budget.turns = rng.int(2, 6);
        break;
      case "tokens":
        budget.tokens = rng.int(200, 900);
        break;
      case "costUsd":
        budget.costUsd = rng.int(2, 9) / 1_000;
        break;
      case "wallClockMs":
        budget.wallClockMs = rng.int(20, 180) * 1_000;
        break;
    }
  }
  const policy = rng.int(0, 4);
  if (policy < 3) budget.onExceeded = (["stop", "finish_turn", "pause"] as const)[policy];
  return budget;
}
