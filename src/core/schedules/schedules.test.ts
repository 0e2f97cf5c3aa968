import { describe, expect, it } from "vitest";
import type { ScheduledTask } from "../../contracts/entities/scheduledTasks.js";
import { scheduledTaskEvent, type DomainEvent } from "../../contracts/events.js";
import type { Run } from "../../contracts/entities/runs.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
import { DUE, NEXT, TASK, fire, save } from "../testing/scheduleFixtures.js";
import type { Decision } from "../decision.js";


function aTask(overrides: Partial<ScheduledTask> = {}): ScheduledTask {
  // The task a plain save() creates, with the fields a save sets.
  const { scheduledTaskId: _id, mode: _mode, nextFireAt: _due, ...fields } = save().data;
  return {
    id: TASK,
    ...fields,
    createdAt: NOW,
    updatedAt: NOW,
    nextFireAt: DUE,
    lastFire: null,
    fireCount: 0,
    ...overrides,
  };
}

const withTask = (task: ScheduledTask): DomainEvent => scheduledTaskEvent("scheduled-task.updated", task);

function accepted(decision: Decision) {
  if (decision.kind !== "accepted") throw new Error(`rejected: ${decision.rejection.code} ${decision.rejection.message}`);
  return decision;
}

function taskAfter(decision: Decision): ScheduledTask {
  const event = accepted(decision).events.find((e) => e.type === "scheduled-task.updated");
  return (event!.data as { task: ScheduledTask }).task;
}

function runsOf(decision: Decision): Run[] {
  return accepted(decision).events.flatMap((e) => (e.type === "run.created" || e.type === "run.updated" ? [(e.data).run] : []));
}

describe("scheduled-task.save and delete", () => {
  it("creates a task; a paused task has no due time", () => {
    given().when(save()).then([withTask(aTask())]);
    given().when(save({ enabled: false })).then([withTask(aTask({ enabled: false, nextFireAt: null }))]);
  });

  it("refuses a second create, an update of an unknown task, and a bound thread of another project", () => {
    given(withTask(aTask())).when(save()).thenRejects(RejectionCode.scheduledTaskAlreadyExists);
    given().when(save({ mode: "update" })).thenRejects(RejectionCode.scheduledTaskNotFound);
    const other = aProviderThread("thread:other", "steerable", { projectId: "project:2" });
    given(existing(other)).when(save({ boundThreadId: other.id })).thenRejects(RejectionCode.scheduledTaskInvalid);
    given().when(save({ boundThreadId: "thread:missing" })).thenRejects(RejectionCode.threadNotFound);
  });

  it("an update keeps the creator, the creation time and the fire history", () => {
    const lastFire = { dueAt: DUE, firedAt: DUE, cause: "timer" as const, instants: 1, outcome: "started" as const, reason: null, runId: "run:x", threadId: "thread:x" };
    const before = aTask({ createdAt: "2026-01-01T00:00:00.000Z", createdBy: "agent", createdByThreadId: "thread:a", lastFire, fireCount: 3 });
    const decision = given(withTask(before)).when(save({ mode: "update", prompt: "new prompt", createdBy: "user" })).decision;
    const task = taskAfter(decision);
    expect(task).toMatchObject({ prompt: "new prompt", createdBy: "agent", createdByThreadId: "thread:a", createdAt: "2026-01-01T00:00:00.000Z", lastFire, fireCount: 3 });
  });

  it("deletes a task for good; later fires of it are refused", () => {
    const state = given(withTask(aTask())).when(cmd("scheduled-task.delete", { scheduledTaskId: TASK })).thenIncludes(
      scheduledTaskEvent("scheduled-task.deleted", aTask({ enabled: false, nextFireAt: null })),
    );
    expect(state.scheduledTasks.has(TASK)).toBe(false);
    given(withTask(aTask()), scheduledTaskEvent("scheduled-task.deleted", aTask())).when(fire()).thenRejects(RejectionCode.scheduledTaskNotFound);
  });
});

describe("scheduled-task.fire", () => {
  it("an unbound fire launches a fresh scheduler thread with a started scheduled_task run, and advances the due time", () => {
    const decision = given(withTask(aTask())).when(fire()).decision;
    const created = accepted(decision).events.find((e) => e.type === "thread.created");
    expect(created?.data).toMatchObject({ thread: { id: "thread:fire-1", creationSource: "scheduler", runtimeMode: "approval-required", title: "Nightly audit" } });
    const runs = runsOf(decision);
    expect(runs.at(-1)).toMatchObject({ id: "run:fire-1", kind: "scheduled_task", status: "starting" });
    expect(accepted(decision).effects.map((e) => e.kind)).toEqual(["provider.turn.start"]);
    const task = taskAfter(decision);
    expect(task).toMatchObject({ nextFireAt: NEXT, fireCount: 1, lastFire: { outcome: "started", runId: "run:fire-1", threadId: "thread:fire-1", cause: "timer" } });
    const state = fold(withTask(aTask()), ...accepted(decision).events.map((e) => e as DomainEvent));
    expect(state.scheduledRuns.get("run:fire-1")).toBe(TASK);
  });

  it("refuses a stale instant and a paused task: a second timer for the same instant writes nothing", () => {
    given(withTask(aTask({ nextFireAt: NEXT }))).when(fire()).thenRejects(RejectionCode.scheduledFireStale);
    given(withTask(aTask({ enabled: false, nextFireAt: null }))).when(fire()).thenRejects(RejectionCode.scheduledTaskPaused);
    given(withTask(aTask())).when(fire({ cause: "webhook" })).thenRejects(RejectionCode.scheduledTaskInvalid);
  });

  it("run now fires a paused task without moving its schedule", () => {
    const decision = given(withTask(aTask({ enabled: false, nextFireAt: null }))).when(fire({ cause: "manual", dueAt: NOW, nextFireAt: null })).decision;
    expect(taskAfter(decision)).toMatchObject({ nextFireAt: null, lastFire: { cause: "manual", outcome: "started" } });
  });

  it("overlap skip records a skipped fire while the previous fire's run is active; queue queues it in the bound thread", () => {
    const thread = aProviderThread("thread:bound");
    const running = aRun(thread, { id: "run:previous", kind: "scheduled_task" });
    const lastFire = { dueAt: DUE, firedAt: DUE, cause: "timer" as const, instants: 1, outcome: "started" as const, reason: null, runId: running.id, threadId: thread.id };
    const history = [existing(thread), runCreated(running)];
    const skip = given(...history, withTask(aTask({ boundThreadId: thread.id, lastFire }))).when(fire()).decision;
    expect(runsOf(skip)).toEqual([]);
    expect(taskAfter(skip)).toMatchObject({ nextFireAt: NEXT, lastFire: { outcome: "skipped", runId: null, reason: expect.stringContaining("run:previous") } });
    const queue = given(...history, withTask(aTask({ boundThreadId: thread.id, lastFire, overlap: "queue" }))).when(fire()).decision;
    expect(runsOf(queue).at(-1)).toMatchObject({ id: "run:fire-1", threadId: thread.id, status: "queued", queueRank: 0 });
    expect(accepted(queue).effects).toEqual([]);
    expect(taskAfter(queue).lastFire).toMatchObject({ outcome: "queued", threadId: thread.id });
  });

  it("a bound fire into an idle thread starts at once; a deleted bound thread makes a skipped fire that still advances", () => {
    const thread = aProviderThread("thread:bound");
    const started = given(existing(thread), withTask(aTask({ boundThreadId: thread.id }))).when(fire()).decision;
    expect(runsOf(started).at(-1)).toMatchObject({ threadId: thread.id, status: "starting", kind: "scheduled_task" });
    const gone = given(existing({ ...thread, deletedAt: NOW }), withTask(aTask({ boundThreadId: thread.id }))).when(fire()).decision;
    expect(taskAfter(gone)).toMatchObject({ nextFireAt: NEXT, lastFire: { outcome: "skipped", reason: "the bound thread thread:bound is deleted" } });
  });

  it("a catch-up fire says how many due times it stands for; a webhook body arrives delimited as untrusted", () => {
    const catchUp = given(withTask(aTask())).when(fire({ cause: "catch_up", instants: 5 })).decision;
    const text = accepted(catchUp).events.flatMap((e) => (e.type === "turn-item.updated" ? [(e.data as { item: { text?: string } }).item.text ?? ""] : []))[0]!;
    expect(text).toContain("5 due times passed while the server was down");
    expect(text).toContain("audit the dependencies");
    const hook = aTask({ trigger: { type: "webhook", signed: false, filters: [], dedupeKey: null, tokenHash: "a".repeat(64) }, nextFireAt: null });
    const webhook = given(withTask(hook)).when(fire({ cause: "webhook", dueAt: NOW, nextFireAt: null, context: '{"action":"opened"}' })).decision;
    const hookText = accepted(webhook).events.flatMap((e) => (e.type === "turn-item.updated" ? [(e.data as { item: { text?: string } }).item.text ?? ""] : []))[0]!;
    expect(hookText).toMatch(/BEGIN UNTRUSTED WEBHOOK BODY[^\n]*\n\{"action":"opened"\}\n----- END UNTRUSTED WEBHOOK BODY/);
  });

  it("an unavailable provider makes a skipped fire", () => {
    const decision = given(withTask(aTask({ providerInstanceId: "gone" }))).when(fire()).decision;
    expect(taskAfter(decision).lastFire).toMatchObject({ outcome: "skipped", reason: "provider instance gone is not available" });
    expect(runsOf(decision)).toEqual([]);
  });
});
