import { describe, expect, it } from "vitest";
import type { Workflow } from "../../contracts/entities/workflows.js";
import { FaultKind } from "./faults.js";
import { type SimOptions, type SimResult, runSeed } from "./runner.js";
import { failureReport } from "./testSuiteSeeds.js";

/**
 * Seeds that once found a real bug in Loom, kept as regression tests. Each
 * replays its seed with the options that found it, checks that the run still
 * reaches the situation (`reached`, so a seed that drifted away from it fails
 * loudly instead of passing vacuously) and that every invariant holds.
 * Adding one: the seed and options from the failure's reproduce line, what
 * it found, and a fact of the run that shows the situation was reached.
 */
interface Regression {
  readonly options: SimOptions;
  readonly found: string;
  readonly reached: (result: SimResult) => boolean;
}

const REGRESSIONS: readonly Regression[] = [
  {
    // Found by seed 1; seeds 11, 9 and 5 reached it while the budget operations moved the schedule of operations, and seed 1, then seed 7 since waits record their holds and budgets pause, then seed 20 since agents start workflows.
    // npm run sim -- --seed 20 --faults none --store memory --nodes 1
    options: { seed: 20, faults: [], store: "memory", trace: true },
    found:
      "a message steered into a turn that had just ended (its turn.completed not yet recorded) was refused by the provider and silently lost: " +
      "the run completed without it (input-reaches-agent). Now the session manager re-sends a refused steer as a follow-up run.",
    reached: (result) => result.trace.some((line) => line.includes("re-sending the message as a follow-up")),
  },
  {
    // Found by seed 103; seed 14 reaches the same situation since messages and plans have records of their own (193, 178, 5, 16, then 52, before it, as the schedule of operations moved).
    // npm run sim -- --seed 14 --faults crash,lease-expiry --store memory --nodes 1
    options: { seed: 14, faults: [FaultKind.crash, FaultKind.leaseExpiry], store: "memory" },
    found:
      "a steer still in the outbox when the node was killed, for a run that had already completed, was abandoned on boot and its message lost " +
      "(input-reaches-agent). Now boot reconciliation re-sends such a steer as a follow-up run.",
    reached: (result) => result.stats.resentSteersOnBoot > 0,
  },
  {
    // npm run sim -- --seed 7 --faults lease-expiry --store memory --nodes 1
    options: { seed: 7, faults: [FaultKind.leaseExpiry], store: "memory", trace: true },
    found:
      "a provider.turn.start whose lease lapsed while its provider call stalled was claimed again by the same worker and run a second time " +
      "after the first: the completion notice it carried reached the parent agent twice (result-delivered-at-most-once). Now the outbox " +
      "worker never runs a row it is still running again.",
    reached: (result) => result.trace.some((line) => line.includes("claimed again while it still runs here")),
  },
  {
    // Found by seed 260; seed 1463 on SQLite reaches the same situation since messages and plans have records of their own (611, 1404, 1317, then 1391 before it).
    // npm run sim -- --seed 1463 --faults all --store sqlite --nodes 1
    options: { seed: 1463, store: "sqlite", trace: true },
    found:
      "a task_cancel in flight when the node was killed met the closed store and threw an untyped error (typed-failures). Now a call cut off " +
      "by the store closing is the server shutting down: a retryable orchestration_error that says so.",
    reached: (result) => result.trace.some((line) => line.includes("cut off: the store closed under it")),
  },
  {
    // Found by seed 40348; seed 534 reaches the same situation since messages and plans have records of their own (611, 642, 665, then 1204 before it).
    // npm run sim -- --seed 534 --faults all --store sqlite --nodes 1
    options: { seed: 534, store: "sqlite" },
    found:
      "a delegate_task wait on a node that was killed checked its task after the node's SQLite store had closed: the timeline's read threw " +
      "store_closed inside the wait's callback, where nothing caught it, and ended the process (no later seed ran). Now a wait whose check " +
      "throws rejects with that error, which every transport answers as the server shutting down, and an error that escapes every handler " +
      "fails its seed (errors-never-escape) instead of ending the process.",
    reached: (result) => result.stats.closedStoreReads > 0,
  },
  {
    // Found by seed 8 (and 9, 26, 47, 58, ... of a run from seed 1) once agents started workflows; kept as seed 9, then 19, then 7.
    // npm run sim -- --seed 7 --faults all --store memory --nodes 1
    options: { seed: 7 },
    found:
      "a workflow script whose parallel() rejected while other agent() calls still ran ended with their promises alive in the interpreter: " +
      "freeing it aborted the WebAssembly module (every later script of the process failed), and the late answers met a disposed " +
      "interpreter as an unhandled rejection (errors-never-escape). Now the sandbox releases the unanswered calls' promises first and drops their answers.",
    reached: (result) => result.log.some((event) => event.type === "workflow.updated" && workflowEndedWithCallsRunning((event.data as { workflow: Workflow }).workflow)),
  },
];

function workflowEndedWithCallsRunning(workflow: Workflow): boolean {
  return workflow.status !== "running" && workflow.steps.some((step) => step.status === "running");
}

describe("regression seeds", () => {
  for (const regression of REGRESSIONS) {
    it(`seed ${regression.options.seed}: ${regression.found.slice(0, 80)}…`, async () => {
      const result = await runSeed(regression.options);
      expect(regression.reached(result), `seed ${regression.options.seed} no longer reaches the situation it was kept for; find a new seed (${result.reproduce})`).toBe(true);
      expect(result.violations, failureReport(result)).toEqual([]);
    });
  }
});
