import { describe, expect, it } from "vitest";
import type { OrchestrationState } from "../core/state.js";
import { existing } from "../core/testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../core/testing/runFixtures.js";
import { TEST_NOW as NOW, fold } from "../core/testing/scenario.js";
import { shellRowOf } from "./projections.js";
import { currentRunOf } from "./queries.js";

/** A shell row's `runStatus` follows the turn in flight while later runs wait behind it (currentRunOf). */

const A = "thread:a";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: "run:1", ordinal: 1 });
const queued = aRun(thread, { id: "run:2", ordinal: 2, status: "queued", startedAt: null, queueRank: 1 });

function runStatus(state: OrchestrationState): string | null | undefined {
  return shellRowOf(state, state.threads.get(A)!, {})?.runStatus;
}

describe("the shell row's runStatus", () => {
  it("is the latest run's when that run has started", () => {
    expect(runStatus(fold(existing(thread), runCreated(running)))).toBe("running");
    const done = aRun(thread, { id: "run:1", status: "completed", endedAt: NOW });
    expect(runStatus(fold(existing(thread), runCreated(done)))).toBe("completed");
  });

  it("is the turn in flight's while a later run is queued behind it", () => {
    const state = fold(existing(thread), runCreated(running), runCreated(queued));
    expect(currentRunOf(state, A)?.id).toBe("run:1");
    expect(runStatus(state)).toBe("running");
  });

  it("is the turn in flight's when the run after it was cancelled before it began", () => {
    const cancelled = { ...queued, status: "cancelled" as const, queueRank: null, endedAt: NOW };
    expect(runStatus(fold(existing(thread), runCreated(running), runCreated(cancelled)))).toBe("running");
  });

  it("is queued when nothing is in flight and a run waits", () => {
    const done = aRun(thread, { id: "run:1", status: "completed", endedAt: NOW });
    expect(runStatus(fold(existing(thread), runCreated(done), runCreated(queued)))).toBe("queued");
  });
});
