import { describe, expect, it } from "vitest";
import type { Command } from "../../contracts/commands.js";
import type { DomainEvent } from "../../contracts/events.js";
import { given } from "../testing/scenario.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, delegate, deliverCompletion, finish, fold, labelledContext, rootWithRun, says, setupContext, step, steps, turnEnds } from "../testing/delegationFixtures.js";
import { MAX_NOTICE_REDELIVERIES } from "./lostNotices.js";

const TASK = "subagent:t1";
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";

const lost = (runId: string, reason = "server_restarted"): Command =>
  cmd("provider-runtime.run-lost", { threadId: ROOT, runId, status: "interrupted", reason, message: "Loom restarted." });

/** An idle parent whose child t1 completed, and the run its completion notice started. */
function delivered(): { history: DomainEvent[]; noticeRunId: string } {
  const ctx = setupContext();
  const delegated = steps(rootWithRun(), [delegate("t1"), turnEnds(ROOT, ROOT_RUN)], ctx);
  const history = step(steps(delegated, finish(CHILD, CHILD_RUN, "All done."), ctx), deliverCompletion(TASK), labelledContext("w"));
  const noticeRunId = fold(history).tasks.get(TASK)!.notices[0]!.runId!;
  return { history, noticeRunId };
}

const noticeRuns = (history: readonly DomainEvent[]) => [...fold(history).runs.values()].filter((run) => run.threadId === ROOT && run.kind === "system_follow_up");

describe("a completion notice whose delivery run was lost", () => {
  it("is pending again, goes out once on the next run, and never twice", () => {
    const { history, noticeRunId } = delivered();
    expect(fold(history).runs.get(noticeRunId)?.status).toBe("starting");
    const afterLoss = step(history, lost(noticeRunId), labelledContext("x"));
    const task = fold(afterLoss).tasks.get(TASK)!;
    expect(task.completionDelivery).toBe("pending");
    expect(task.notices).toEqual([{ kind: "completion", requestId: null, runId: noticeRunId, delivery: "queued", lostAt: expect.any(String) }]);

    const again = step(afterLoss, deliverCompletion(TASK), labelledContext("y"));
    const redelivered = fold(again).tasks.get(TASK)!;
    expect(redelivered.completionDelivery).toBe("delivered");
    const runs = noticeRuns(again);
    expect(runs.map((run) => run.status)).toEqual(["interrupted", "starting"]);
    expect(redelivered.notices.filter((notice) => notice.lostAt === undefined)).toEqual([{ kind: "completion", requestId: null, runId: runs[1]!.id, delivery: "queued" }]);
    // The new run carries the same notice text: one notification item per run.
    const items = (fold(again).turnItems.get(ROOT) ?? []).filter((item) => item?.type === "notification");
    expect(items.map((item) => item.runId)).toEqual([noticeRunId, runs[1]!.id]);

    // A second delivery of the same notice is refused and writes nothing.
    given(...again).when(deliverCompletion(TASK), labelledContext("z")).thenRejects("delivery_not_pending");
  });

  it("is not sent again when the agent had already answered in that run", () => {
    const { history, noticeRunId } = delivered();
    const answered = steps(history, [cmd("provider-runtime.turn-started", { threadId: ROOT, runId: noticeRunId }), says(ROOT, noticeRunId, "ack", "Noted.")], labelledContext("x"));
    const afterLoss = step(answered, lost(noticeRunId), labelledContext("y"));
    const task = fold(afterLoss).tasks.get(TASK)!;
    expect(task.completionDelivery).toBe("delivered");
    expect(task.notices[0]!.lostAt).toBeUndefined();
  });

  it("is sent again after a crashed session, but not after a deliberate release", () => {
    for (const [reason, expected] of [["crashed", "pending"], ["detached", "delivered"]] as const) {
      const { history, noticeRunId } = delivered();
      const session = "provider-session:p1";
      const opened = steps(
        history,
        [
          cmd("provider-runtime.session-opened", { threadId: ROOT, providerSessionId: session, providerInstanceId: "steerable", driver: "scripted" }),
          cmd("provider-runtime.attempt-started", { threadId: ROOT, runId: noticeRunId, providerSessionId: session }),
        ],
        labelledContext("x"),
      );
      const released = step(opened, cmd("provider-runtime.session-released", { threadId: ROOT, providerSessionId: session, reason, message: "gone" }), labelledContext("y"));
      expect(fold(released).runs.get(noticeRunId)?.status).toBe("interrupted");
      expect(fold(released).tasks.get(TASK)!.completionDelivery).toBe(expected);
    }
  });

  it(`is sent again at most ${MAX_NOTICE_REDELIVERIES} times`, () => {
    let { history, noticeRunId } = delivered();
    for (let round = 0; round <= MAX_NOTICE_REDELIVERIES; round += 1) {
      history = step(history, lost(noticeRunId), labelledContext(`l${round}`));
      const task = fold(history).tasks.get(TASK)!;
      if (round === MAX_NOTICE_REDELIVERIES) {
        expect(task.completionDelivery).toBe("delivered");
        break;
      }
      expect(task.completionDelivery).toBe("pending");
      history = step(history, deliverCompletion(TASK), labelledContext(`d${round}`));
      noticeRunId = fold(history).tasks.get(TASK)!.notices.at(-1)!.runId!;
    }
    expect(noticeRuns(history).every((run) => run.status === "interrupted")).toBe(true);
    expect(noticeRuns(history)).toHaveLength(MAX_NOTICE_REDELIVERIES + 1);
  });
});
