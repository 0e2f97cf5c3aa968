import { describe, expect, it } from "vitest";
import { nodeEvent } from "../contracts/events.js";
import type { OrchestrationState } from "../core/state.js";
import { cmd, existing } from "../core/testing/fixtures.js";
import { aProviderThread, aRun, aWaitNode, after, runCreated } from "../core/testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../core/testing/scenario.js";
import { shellRowOf } from "./projections.js";

/** A shell row's `inWait`: the thread's active run is inside a recorded wait (src/core/run/waits.ts). */

const A = "thread:a";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: "run:1" });
const waiting = aWaitNode(running, "node:wait-1", "delegate_task subagent:b");

function inWait(state: OrchestrationState): boolean | undefined {
  return shellRowOf(state, state.threads.get(A)!, {})?.inWait;
}

describe("the shell row's inWait", () => {
  it("is false for a running agent that waits on nothing", () => {
    expect(inWait(fold(existing(thread)))).toBe(false);
    expect(inWait(fold(existing(thread), runCreated(running)))).toBe(false);
  });

  it("is true while the active run is inside a recorded wait, and false again once the wait returns", () => {
    const opened = given(existing(thread), runCreated(running))
      .when(cmd("thread-wait.started", { threadId: A, runId: "run:1", nodeId: "node:wait-1", label: "delegate_task", waitingOn: "subagent:b" }))
      .then([nodeEvent(waiting)]);
    expect(inWait(opened)).toBe(true);
    const closed = given(existing(thread), runCreated(running), nodeEvent(waiting))
      .when(cmd("thread-wait.ended", { threadId: A, nodeId: "node:wait-1" }))
      .then([nodeEvent(after(waiting, { status: "completed", endedAt: NOW }))]);
    expect(inWait(closed)).toBe(false);
  });

  it("is false when the run holding the wait is over, whatever the wait node still says", () => {
    const ended = aRun(thread, { id: "run:1", status: "completed", endedAt: NOW });
    expect(inWait(fold(existing(thread), runCreated(ended), nodeEvent(waiting)))).toBe(false);
  });
});
