import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import type { OrchestrationState } from "../state.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, existing } from "./fixtures.js";
import { ScenarioMismatch, TEST_NOW, deepEqual, given, testContext } from "./scenario.js";

const A = "thread:a";
const thread = aThread({ id: A });
const archived = threadEvent("thread.archived", { ...thread, archivedAt: TEST_NOW, updatedAt: TEST_NOW });

describe("given/when/then", () => {
  it("passes on the exact events and returns the folded state", () => {
    const state: OrchestrationState = given(existing(thread)).when(cmd("thread.archive", { threadId: A })).then([archived]);
    expect(state.threads.get(A)?.archivedAt).toBe(TEST_NOW);
  });

  it("fails when the events differ in one field", () => {
    const wrong = threadEvent("thread.archived", { ...thread, archivedAt: TEST_NOW });
    expect(() => given(existing(thread)).when(cmd("thread.archive", { threadId: A })).then([wrong])).toThrow(ScenarioMismatch);
  });

  it("fails when an event is missing or extra", () => {
    const scenario = given(existing(thread)).when(cmd("thread.archive", { threadId: A }));
    expect(() => scenario.then([])).toThrow(ScenarioMismatch);
    expect(() => scenario.then([archived, archived])).toThrow(ScenarioMismatch);
  });

  it("fails then() on a rejection and thenRejects() on an acceptance or another code", () => {
    expect(() => given().when(cmd("thread.archive", { threadId: A })).then([])).toThrow(/rejected/);
    expect(() => given(existing(thread)).when(cmd("thread.archive", { threadId: A })).thenRejects(RejectionCode.threadNotFound)).toThrow(/accepted/);
    expect(() => given().when(cmd("thread.archive", { threadId: A })).thenRejects(RejectionCode.threadDeleted)).toThrow(/another code/);
  });

  it("fails when an expected effect is not emitted", () => {
    const effect = { kind: "noop", streamId: A, payload: null, replaySafe: true };
    expect(() => given(existing(thread)).when(cmd("thread.archive", { threadId: A })).then([archived], [effect])).toThrow(/effects/);
  });

  it("thenHistory() returns the history plus the accepted events, and fails on a rejection", () => {
    expect(given(existing(thread)).when(cmd("thread.archive", { threadId: A })).thenHistory()).toEqual([existing(thread), archived]);
    expect(() => given().when(cmd("thread.archive", { threadId: A })).thenHistory()).toThrow(/rejected/);
  });

  it("folds each case into a fresh state", () => {
    given(existing(thread)).when(cmd("thread.archive", { threadId: A })).then([archived]);
    given().when(cmd("thread.archive", { threadId: A })).thenRejects(RejectionCode.threadNotFound);
  });
});

describe("testContext", () => {
  it("reads the fixed clock and counts ids per context", () => {
    const ctx = testContext();
    expect(ctx.now).toBe(TEST_NOW);
    expect([ctx.allocate.thread(), ctx.allocate.run()]).toEqual([
      "thread:00000000-0000-4000-8000-000000000001",
      "run:00000000-0000-4000-8000-000000000002",
    ]);
    expect(testContext().allocate.thread()).toBe("thread:00000000-0000-4000-8000-000000000001");
  });
});

describe("deepEqual", () => {
  it("compares plain data structurally", () => {
    expect(deepEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(deepEqual({ a: [1, { b: null }] }, { a: [1, { b: 0 }] })).toBe(false);
    expect(deepEqual({ a: undefined }, {})).toBe(false);
    expect(deepEqual([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
  });
});
