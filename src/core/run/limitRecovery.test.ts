import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, delegate, fold, labelledContext, rootWithRun, says, setupContext, step, steps, turnEnds } from "../testing/delegationFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";
import { LIMIT_RESUME_TITLE, limitResumeText, limitStopNotice } from "./limitRecovery.js";

const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const RESET = "2026-03-01T14:05:00.000Z";
const LIMIT = { resetAt: RESET, message: "You've hit your limit", autoResume: true };

/** The child's turn fails on a usage limit that resets at RESET. */
const limitedEnd = (limit: Partial<typeof LIMIT> = {}) =>
  cmd("provider-runtime.turn-completed", { threadId: CHILD, runId: CHILD_RUN, status: "failed", error: "usage limit reached", limit: { ...LIMIT, ...limit } });
const resume = (runId = CHILD_RUN, resetAt = RESET) => cmd("thread.limit-recovery.resume", { threadId: CHILD, runId, resetAt });

/** Root with a running turn that delegated t1, whose turn is running and said something. */
function childWorking(): DomainEvent[] {
  return steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN), says(CHILD, CHILD_RUN, "a1", "Half way.")], setupContext());
}

describe("a run a usage limit stopped", () => {
  it("records limitRecovery on its thread, snoozes it until the reset, notes it on the timeline, and leaves the task waiting", () => {
    const state = fold(step(childWorking(), limitedEnd(), labelledContext("w")));
    expect(state.runs.get(CHILD_RUN)).toMatchObject({ status: "failed", failure: { code: "provider_error" } });
    const thread = state.threads.get(CHILD)!;
    expect(thread.limitRecovery).toEqual({ runId: CHILD_RUN, resetAt: RESET, autoResume: true, message: "You've hit your limit", snooze: { until: RESET } });
    expect(thread).toMatchObject({ snoozedUntil: RESET, snoozedAt: NOW });
    const texts = (state.turnItems.get(CHILD) ?? []).filter((item) => item?.type === "system_notice").map((item) => (item?.type === "system_notice" ? item.text : ""));
    expect(texts).toEqual([limitStopNotice({ resetAt: RESET, autoResume: true })]);
    // The task is not over: its work resumes after the reset.
    expect(state.tasks.get(TASK)).toMatchObject({ status: "running", resultContextTransferId: null });
  });

  it("keeps a longer snooze already in force, and records no snooze of its own", () => {
    const later = "2026-03-02T09:00:00.000Z";
    const history = step(childWorking(), cmd("thread.snooze", { threadId: CHILD, until: later }), setupContext());
    const thread = fold(step(history, limitedEnd(), labelledContext("w"))).threads.get(CHILD)!;
    expect(thread.snoozedUntil).toBe(later);
    expect(thread.limitRecovery).toEqual({ runId: CHILD_RUN, resetAt: RESET, autoResume: true, message: "You've hit your limit" });
  });

  it("is an ordinary failure when its reset already passed or the turn ended otherwise: the task settles failed", () => {
    const past = fold(step(childWorking(), limitedEnd({ resetAt: "2026-03-01T11:00:00.000Z" }), labelledContext("w")));
    expect(past.threads.get(CHILD)?.limitRecovery ?? null).toBeNull();
    expect(past.tasks.get(TASK)?.status).toBe("failed");
    const plain = fold(step(childWorking(), turnEnds(CHILD, CHILD_RUN, "failed", "boom"), labelledContext("w")));
    expect(plain.threads.get(CHILD)?.limitRecovery ?? null).toBeNull();
    expect(plain.tasks.get(TASK)?.status).toBe("failed");
  });

  it("with autoResume off records the recovery and lets the task settle failed: nothing will resume it", () => {
    const state = fold(step(childWorking(), limitedEnd({ autoResume: false }), labelledContext("w")));
    expect(state.threads.get(CHILD)?.limitRecovery).toMatchObject({ autoResume: false, resetAt: RESET });
    expect(state.tasks.get(TASK)?.status).toBe("failed");
  });
});

describe("thread.limit-recovery.resume", () => {
  it("clears the recovery, wakes the limit's snooze and resumes the work as one follow-up run that starts at once", () => {
    const history = step(childWorking(), limitedEnd(), labelledContext("w"));
    const state = fold(step(history, resume(), labelledContext("r")));
    const thread = state.threads.get(CHILD)!;
    expect(thread.limitRecovery).toBeNull();
    expect(thread).toMatchObject({ snoozedUntil: null, snoozedAt: null });
    const runs = [...state.runs.values()].filter((run) => run.threadId === CHILD);
    expect(runs.map((run) => [run.kind, run.status])).toEqual([
      ["delegated_task", "failed"],
      ["system_follow_up", "starting"],
    ]);
    const notice = (state.turnItems.get(CHILD) ?? []).find((item) => item?.type === "notification");
    expect(notice).toMatchObject({ title: LIMIT_RESUME_TITLE, text: limitResumeText(RESET), delivery: "queued", runId: runs[1]!.id });
    expect(state.tasks.get(TASK)?.status).toBe("running");
  });

  it("settles the task with the resumed run's result when that run completes", () => {
    const ctx = labelledContext("r");
    const history = step(step(childWorking(), limitedEnd(), labelledContext("w")), resume(), ctx);
    const resumed = [...fold(history).runs.values()].find((run) => run.threadId === CHILD && run.kind === "system_follow_up")!;
    const done = fold(steps(history, [says(CHILD, resumed.id, "b1", "Finished after the reset."), turnEnds(CHILD, resumed.id)], ctx));
    expect(done.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Finished after the reset." });
  });

  it("fires once: a second resume of the same reset, or one naming another run or reset, is refused as stale", () => {
    const history = step(step(childWorking(), limitedEnd(), labelledContext("w")), resume(), labelledContext("r"));
    given(...history).when(resume(), labelledContext("x")).thenRejects(RejectionCode.limitRecoveryStale);
    const waiting = step(childWorking(), limitedEnd(), labelledContext("w"));
    given(...waiting).when(resume(CHILD_RUN, "2026-03-01T15:00:00.000Z")).thenRejects(RejectionCode.limitRecoveryStale);
    given(...waiting).when(resume("run:other")).thenRejects(RejectionCode.limitRecoveryStale);
  });

  it("starts nothing when the thread's work went on before the reset, and then settles the task on what ran", () => {
    const ctx = labelledContext("w");
    const waiting = step(childWorking(), limitedEnd(), ctx);
    // Someone sends the child a message: it runs (and completes) before the reset.
    const sent = step(waiting, cmd("message.dispatch", { threadId: CHILD, messageId: "message:later", text: "carry on", createdBy: "user", creationSource: "api" }), ctx);
    const later = [...fold(sent).runs.values()].find((run) => run.threadId === CHILD && run.id !== CHILD_RUN)!;
    const ended = steps(sent, [says(CHILD, later.id, "c1", "Done by hand."), turnEnds(CHILD, later.id)], ctx);
    const state = fold(step(ended, resume(), labelledContext("r")));
    expect(state.threads.get(CHILD)?.limitRecovery).toBeNull();
    expect([...state.runs.values()].filter((run) => run.threadId === CHILD)).toHaveLength(2);
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Done by hand." });
  });
});

describe("stopping a thread that waits for a limit's reset", () => {
  it("thread.stop ends the wait: the recovery is cleared, nothing will resume, and the task settles on the stopped run", () => {
    const waiting = step(childWorking(), limitedEnd(), labelledContext("w"));
    const state = fold(step(waiting, cmd("thread.stop", { threadId: CHILD }), labelledContext("s2")));
    expect(state.threads.get(CHILD)?.limitRecovery).toBeNull();
    expect(state.tasks.get(TASK)).toMatchObject({ status: "failed", summary: expect.stringContaining("usage limit reached") });
    given(...step(waiting, cmd("thread.stop", { threadId: CHILD }), labelledContext("s2"))).when(resume(), labelledContext("r")).thenRejects(RejectionCode.limitRecoveryStale);
  });

  it("stopping an ancestor's task tree (task_cancel, a budget that ran out) settles a descendant whose only work left was the resume", () => {
    // t1 delegated t2, whose turn a usage limit stopped; then t1's task is cancelled.
    const history = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN), delegate("t2", CHILD, CHILD_RUN)], setupContext());
    const waiting = step(history, cmd("provider-runtime.turn-completed", { threadId: "thread:t2", runId: "run:t2", status: "failed", error: "usage limit reached", limit: LIMIT }), labelledContext("w"));
    expect(fold(waiting).tasks.get("subagent:t2")).toMatchObject({ status: "running", resultContextTransferId: null });
    const state = fold(step(waiting, cmd("subagent.stop", { taskId: TASK }), labelledContext("c")));
    expect(state.threads.get("thread:t2")?.limitRecovery).toBeNull();
    expect(state.tasks.get("subagent:t2")?.resultContextTransferId).not.toBeNull();
    // t1's own turn is still being interrupted: it settles when that turn ends.
    expect(state.tasks.get(TASK)).toMatchObject({ cancelRequestedAt: expect.any(String), resultContextTransferId: null });
  });

  it("task_cancel (subagent.stop) may cancel a task whose only work left is the resume", () => {
    const waiting = step(childWorking(), limitedEnd(), labelledContext("w"));
    const state = fold(step(waiting, cmd("subagent.stop", { taskId: TASK }), labelledContext("c")));
    expect(state.threads.get(CHILD)?.limitRecovery).toBeNull();
    expect(state.tasks.get(TASK)?.resultContextTransferId).not.toBeNull();
  });
});
