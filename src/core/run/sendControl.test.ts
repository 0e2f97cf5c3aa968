import { describe, expect, it } from "vitest";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, delegate, deliverCompletion, finish, fold, rootWithRun, setupContext, step, steps } from "../testing/delegationFixtures.js";
import { aProviderThread, aRun, aUserMessage, itemEvent, runCreated } from "../testing/runFixtures.js";
import { given } from "../testing/scenario.js";
import { existing } from "../testing/fixtures.js";
import { isProviderControlMessage } from "./controlMessages.js";

const send = (text: string, mode: "auto" | "steer" | "restart" | "queue", runId?: string) =>
  cmd("message.dispatch", { threadId: ROOT, text, mode, ...(runId === undefined ? {} : { runId }) });

/** Root on `provider` whose running turn was started by `text`. */
function runningTurn(provider: string, text: string) {
  const root = aProviderThread(ROOT, provider);
  return [existing(root), runCreated(aRun(root, { id: ROOT_RUN, messageId: "message:root" })), itemEvent(aUserMessage(ROOT, ROOT_RUN, 0, "turn-item:root", "message:root", text))];
}

describe("provider control commands (/compact, /logout)", () => {
  it("recognizes the command by its first word, with arguments and any case", () => {
    expect(["/compact", "  /compact focus on the tests", "/LOGOUT", "/logout\nnow"].map(isProviderControlMessage)).toEqual([true, true, true, true]);
    expect(["/compacted", "please /compact", "compact", "/help"].map(isProviderControlMessage)).toEqual([false, false, false, false]);
  });

  it("restart refuses a control message and a control turn", () => {
    given(...runningTurn("steerable", "work")).when(send("/compact", "restart")).thenRejects(RejectionCode.threadNotSendable);
    given(...runningTurn("steerable", "/logout")).when(send("go on", "restart")).thenRejects(RejectionCode.threadNotSendable);
  });

  it("steer refuses them; auto queues instead of steering", () => {
    given(...runningTurn("steerable", "work")).when(send("/compact", "steer")).thenRejects(RejectionCode.threadNotSendable);
    given(...runningTurn("steerable", "/compact")).when(send("more", "steer")).thenRejects(RejectionCode.threadNotSendable);
    const queuedMessage = fold(given(...runningTurn("steerable", "work")).when(send("/compact", "auto", "run:c")).thenHistory());
    expect(queuedMessage.runs.get("run:c")).toMatchObject({ status: "queued", queueRank: 0 });
    const queuedBehindControl = fold(given(...runningTurn("steerable", "/compact")).when(send("more", "auto", "run:m")).thenHistory());
    expect(queuedBehindControl.runs.get("run:m")).toMatchObject({ status: "queued", queueRank: 0 });
  });

  it("an ordinary running turn is still steered", () => {
    const state = fold(given(...runningTurn("steerable", "work")).when(send("more", "auto")).thenHistory());
    expect([...state.runs.keys()]).toEqual([ROOT_RUN]);
  });
});

describe("restart and delegated results", () => {
  /** Root on `provider`: t1's result waits in a queued notice run, then the user queued a message. */
  function withQueuedResult(provider: string) {
    const ctx = setupContext();
    const history = steps(rootWithRun(provider), [delegate("t1"), ...finish("thread:t1", "run:t1", "done"), deliverCompletion("subagent:t1"), send("later", "queue", "run:later")], ctx);
    const noticeRun = fold(history).tasks.get("subagent:t1")!.notices[0]!.runId!;
    return { history, noticeRun };
  }

  it("on a provider that can stop but not restart, the new message goes after an unheld delegated result, ahead of other messages", () => {
    const { history, noticeRun } = withQueuedResult("plain");
    expect(fold(history).threads.get(ROOT)?.queuedRuns.map((run) => run.runId)).toEqual([noticeRun, "run:later"]);
    const state = fold(step(history, send("now instead", "restart", "run:now"), setupContext()));
    expect(state.runs.get(ROOT_RUN)?.interruptRequestedAt).not.toBeNull();
    expect(state.threads.get(ROOT)?.queuedRuns.map((run) => run.runId)).toEqual([noticeRun, "run:now", "run:later"]);
  });

  it("a held delegated result does not go first", () => {
    const { history, noticeRun } = withQueuedResult("plain");
    const root = fold(history).runs.get(noticeRun)!;
    const held = [...history, { type: "run.updated" as const, streamId: ROOT, data: { run: { ...root, held: true } } }];
    const state = fold(step(held, send("now instead", "restart", "run:now"), setupContext()));
    expect(state.threads.get(ROOT)?.queuedRuns.map((run) => run.runId)).toEqual(["run:now", noticeRun, "run:later"]);
  });
});
