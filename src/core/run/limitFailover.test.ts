import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, delegate, fold, labelledContext, rootWithRun, says, setupContext, step, steps, turnEnds } from "../testing/delegationFixtures.js";
import { given } from "../testing/scenario.js";
import { FAILOVER_TITLE, failoverNotice, failoverText } from "./limitFailover.js";

const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const RESET = "2026-03-01T14:05:00.000Z";

const limitedEnd = () =>
  cmd("provider-runtime.turn-completed", { threadId: CHILD, runId: CHILD_RUN, status: "failed", error: "usage limit reached", limit: { resetAt: RESET, message: "You've hit your limit", autoResume: true } });
const failOver = (providerInstanceId = "plain", trigger: "automatic" | "requested" = "automatic", runId = CHILD_RUN) =>
  cmd("thread.limit-recovery.fail-over", { threadId: CHILD, runId, resetAt: RESET, providerInstanceId, model: "m1", trigger });
const resume = () => cmd("thread.limit-recovery.resume", { threadId: CHILD, runId: CHILD_RUN, resetAt: RESET });

/** The child (on "steerable") said something, then a usage limit stopped its turn. */
function waiting(): DomainEvent[] {
  const working = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN), says(CHILD, CHILD_RUN, "a1", "Half way.")], setupContext());
  return step(working, limitedEnd(), labelledContext("w"));
}

describe("thread.limit-recovery.fail-over", () => {
  it("ends the wait, moves the thread with a context handoff, says why, and continues the work there as one follow-up run", () => {
    const state = fold(step(waiting(), failOver(), labelledContext("f")));
    const thread = state.threads.get(CHILD)!;
    expect(thread).toMatchObject({ limitRecovery: null, snoozedUntil: null, modelSelection: { providerInstanceId: "plain", model: "m1" } });
    const runs = [...state.runs.values()].filter((run) => run.threadId === CHILD);
    expect(runs.map((run) => [run.kind, run.status, run.providerInstanceId])).toEqual([
      ["delegated_task", "failed", "steerable"],
      ["system_follow_up", "starting", "plain"],
    ]);
    const items = (state.turnItems.get(CHILD) ?? []).flatMap((item) => (item === undefined ? [] : [item]));
    // Delivered to the follow-up run as it starts, in the same decision: the item says so.
    expect(items.find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "steerable", toProvider: "plain", strategy: "full_thread_summary", status: "ready" });
    expect(items.filter((item) => item.type === "system_notice").at(-1)).toMatchObject({ level: "info", text: failoverNotice("steerable", "plain", RESET, "automatic") });
    expect(failoverNotice("steerable", "plain", RESET, "automatic")).toBe(`Moved to plain after steerable's usage limit (it resets at ${RESET}).`);
    expect(items.find((item) => item.type === "notification")).toMatchObject({ title: FAILOVER_TITLE, text: failoverText("steerable", "plain"), runId: runs[1]!.id });
    // The handoff is delivered to the follow-up run as it starts, so the new agent gets the thread's context.
    expect([...state.handoffs.values()].filter((handoff) => handoff.threadId === CHILD)).toEqual([
      expect.objectContaining({
        targetProviderInstanceId: "plain",
        delivery: expect.objectContaining({ runId: runs[1]!.id }),
        history: [
          { role: "user", runOrdinal: 1, text: "Do t1" },
          { role: "assistant", runOrdinal: 1, text: "Half way." },
        ],
      }),
    ]);
    expect(state.tasks.get(TASK)).toMatchObject({ status: "running", providerInstanceId: "plain", model: "m1" });
    expect(state.subagents.get(TASK)).toMatchObject({ providerInstanceId: "plain" });
  });

  it("settles the task with the result of the run on the new instance", () => {
    const ctx = labelledContext("f");
    const history = step(waiting(), failOver("plain", "requested"), ctx);
    const moved = [...fold(history).runs.values()].find((run) => run.threadId === CHILD && run.kind === "system_follow_up")!;
    const done = fold(steps(history, [says(CHILD, moved.id, "b1", "Finished on plain."), turnEnds(CHILD, moved.id)], ctx));
    expect(done.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Finished on plain." });
    const notices = (done.turnItems.get(CHILD) ?? []).filter((item) => item?.type === "system_notice");
    expect(notices.at(-1)).toMatchObject({ text: `Moved to plain on request, instead of waiting for steerable's usage limit (it resets at ${RESET}).` });
  });

  it("happens once: after a failover or a resume the recovery is gone, and a failover to the same or an unknown instance is refused", () => {
    const moved = step(waiting(), failOver(), labelledContext("f"));
    given(...moved).when(failOver(), labelledContext("g")).thenRejects(RejectionCode.limitRecoveryStale);
    given(...moved).when(resume(), labelledContext("r")).thenRejects(RejectionCode.limitRecoveryStale);
    given(...step(waiting(), resume(), labelledContext("r"))).when(failOver(), labelledContext("g")).thenRejects(RejectionCode.limitRecoveryStale);
    given(...waiting()).when(failOver("plain", "automatic", "run:other")).thenRejects(RejectionCode.limitRecoveryStale);
    given(...waiting()).when(failOver("steerable")).thenRejects("provider_unchanged");
    given(...waiting()).when(failOver("nowhere")).thenRejects("provider_unavailable");
  });

  it("after an outage past Loom's retries, says so in the stop, the move and the follow-up's brief", () => {
    const outage = cmd("provider-runtime.turn-completed", { threadId: CHILD, runId: CHILD_RUN, status: "failed", error: "Service unavailable", limit: { resetAt: RESET, message: "Service unavailable (HTTP 503)", autoResume: true, cause: "outage" } });
    const working = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN), says(CHILD, CHILD_RUN, "a1", "Half way.")], setupContext());
    const stopped = step(working, outage, labelledContext("w"));
    const waitingState = fold(stopped);
    expect(waitingState.threads.get(CHILD)?.limitRecovery).toMatchObject({ runId: CHILD_RUN, resetAt: RESET, cause: "outage", autoResume: true });
    // The task waits for the move or the retry, not failed.
    expect(waitingState.tasks.get(TASK)?.status).toBe("running");
    const state = fold(step(stopped, failOver(), labelledContext("f")));
    const items = (state.turnItems.get(CHILD) ?? []).flatMap((item) => (item === undefined ? [] : [item]));
    const notices = items.flatMap((item) => (item.type === "system_notice" ? [item.text] : []));
    expect(notices).toContain(`Stopped by provider errors past Loom's retries: the work moves to a failover instance as soon as one is available, else it is tried here again at ${RESET}.`);
    expect(notices.at(-1)).toBe(`Moved to plain after steerable's errors past Loom's retries (tried again at ${RESET}).`);
    expect(items.find((item) => item.type === "notification")).toMatchObject({ title: FAILOVER_TITLE, text: failoverText("steerable", "plain", "outage") });
    expect(failoverText("steerable", "plain", "outage")).toMatch(/^Your previous turn on steerable failed with provider errors Loom's retries could not get past, so your work moved to plain\./);
  });

  it("after an outage with no move, the retry at its time continues the work on the same instance", () => {
    const outage = cmd("provider-runtime.turn-completed", { threadId: CHILD, runId: CHILD_RUN, status: "failed", error: "Service unavailable", limit: { resetAt: RESET, message: "Service unavailable (HTTP 503)", autoResume: true, cause: "outage" } });
    const working = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN), says(CHILD, CHILD_RUN, "a1", "Half way.")], setupContext());
    const state = fold(steps(working, [outage, resume()], labelledContext("r")));
    const runs = [...state.runs.values()].filter((run) => run.threadId === CHILD);
    expect(runs.map((run) => [run.kind, run.providerInstanceId])).toEqual([
      ["delegated_task", "steerable"],
      ["system_follow_up", "steerable"],
    ]);
    const notification = (state.turnItems.get(CHILD) ?? []).find((item) => item?.type === "notification");
    expect(notification).toMatchObject({ text: expect.stringMatching(/^The provider failed your previous turn with errors Loom's retries could not get past; it is tried again now/) });
  });
});
