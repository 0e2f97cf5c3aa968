import { describe, expect, it } from "vitest";
import { cmd } from "../testing/fixtures.js";
import { ROOT, delegate, deliverQuestion, fold, pendingRequestId, rootWithRun, setupContext, step, steps } from "../testing/delegationFixtures.js";

const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";

/** The child asks a question; `blocking: false` is an asynchronous one (a Codex async question). */
const asksAsync = (blocking: boolean) =>
  cmd("provider-runtime.item-completed", {
    threadId: CHILD,
    runId: CHILD_RUN,
    driver: "scripted",
    nativeItemId: "item-q",
    item: { kind: "user_input_request", requestId: "native-q", questions: [{ id: "q1", question: "Which branch?" }], blocking },
  });

describe("asynchronous questions", () => {
  it("an async question opens a non-blocking request and the child's turn keeps running", () => {
    const ctx = setupContext();
    const state = fold(steps(rootWithRun("plain"), [delegate("t1"), asksAsync(false)], ctx));
    const request = [...state.runtimeRequests.values()][0]!;
    expect(request).toMatchObject({ kind: "user_input", blocking: false, status: "pending" });
    expect(state.runs.get(CHILD_RUN)?.status).toBe("running");
  });

  it("a blocking question stops the turn", () => {
    const state = fold(steps(rootWithRun("plain"), [delegate("t1"), asksAsync(true)], setupContext()));
    expect([...state.runtimeRequests.values()][0]).toMatchObject({ blocking: true });
    expect(state.runs.get(CHILD_RUN)?.status).toBe("waiting_on_user_input");
  });

  it.each([
    [false, "is still working while it waits for the answer"],
    [true, "is blocked until it is answered"],
  ])("the parent's notice says whether the child is blocked (blocking %s)", (blocking, says) => {
    const ctx = setupContext();
    const history = steps(rootWithRun("plain"), [delegate("t1"), asksAsync(blocking)], ctx);
    const state = fold(step(history, deliverQuestion(TASK, pendingRequestId(history, CHILD)), ctx));
    const notice = state.turnItems.get(ROOT)!.find((item) => item.type === "notification");
    expect(notice?.type === "notification" && notice.text).toContain(`Delegated task "Task t1" (taskId ${TASK}) asks a question and ${says}:`);
  });
});
