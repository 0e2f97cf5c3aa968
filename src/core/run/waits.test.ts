import { describe, expect, it } from "vitest";
import { nodeEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aWaitNode, after, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: "run:1" });
const started = { threadId: A, runId: "run:1", nodeId: "node:wait-1", label: "t3_thread_wait", waitingOn: "thread:b" };

const waiting = aWaitNode(running, "node:wait-1", "t3_thread_wait thread:b");

describe("recorded waits", () => {
  it("opens a waiting tool_call node on the active run, indexed as the thread's open wait", () => {
    const state = given(existing(thread), runCreated(running)).when(cmd("thread-wait.started", started)).then([nodeEvent(waiting)]);
    expect([...(state.openWaits.get(A) ?? [])]).toEqual(["node:wait-1"]);
  });

  it("closes it when the wait returns", () => {
    const state = given(existing(thread), runCreated(running), nodeEvent(waiting))
      .when(cmd("thread-wait.ended", { threadId: A, nodeId: "node:wait-1" }))
      .then([nodeEvent(after(waiting, { status: "completed", endedAt: NOW }))]);
    expect(state.openWaits.has(A)).toBe(false);
  });

  it("closes the run's open waits when the run ends", () => {
    const ctx = testContext();
    const history = given(existing(thread), runCreated(running), nodeEvent(waiting))
      .when(cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:1", status: "interrupted", error: null }), ctx)
      .thenHistory();
    const state = fold(...history);
    expect(state.nodes.get("node:wait-1")).toMatchObject({ status: "interrupted", endedAt: NOW });
    expect(state.openWaits.has(A)).toBe(false);
    given(...history).when(cmd("thread-wait.ended", { threadId: A, nodeId: "node:wait-1" })).thenRejects(RejectionCode.waitNotFound);
  });

  it("refuses a wait on a run that is not active, an unknown run, and a second record of the same node", () => {
    const ended = aRun(thread, { id: "run:1", status: "completed" });
    given(existing(thread), runCreated(ended)).when(cmd("thread-wait.started", started)).thenRejects(RejectionCode.runNotActive);
    given(existing(thread)).when(cmd("thread-wait.started", started)).thenRejects(RejectionCode.runNotFound);
    given(existing(thread), runCreated(running), nodeEvent(waiting)).when(cmd("thread-wait.started", started)).thenRejects(RejectionCode.waitAlreadyRecorded);
    given(existing(thread)).when(cmd("thread-wait.ended", { threadId: A, nodeId: "node:nope" })).thenRejects(RejectionCode.waitNotFound);
  });
});
