import { describe, expect, it } from "vitest";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, fold, labelled, labelledContext, rootWithRun, setupContext, step, turnEnds } from "../testing/delegationFixtures.js";
import { after, anItem, aRun, effects, itemEvent, runCreated, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const REQUEST = "secret-request:1";
const w = (prefix: string, n: number) => labelled("w", prefix, n);

function pending(overrides: Partial<{ runId: string; providerSessionId: string }> = {}) {
  return cmd("secret_request.record", {
    threadId: ROOT,
    requestId: REQUEST,
    runId: ROOT_RUN,
    providerSessionId: "provider-session:a",
    secretName: "deploy token",
    envVarName: "DEPLOY_TOKEN",
    description: "to push the release",
    status: "pending",
    ...overrides,
  });
}

function outcome(status: "provided" | "declined" | "cancelled") {
  return cmd("secret_request.record", { threadId: ROOT, requestId: REQUEST, secretName: "deploy token", envVarName: "DEPLOY_TOKEN", description: "to push the release", status });
}

const requestItem = () =>
  anItem(
    ROOT,
    ROOT_RUN,
    1,
    REQUEST,
    { type: "secret_request", secretName: "deploy token", envVarName: "DEPLOY_TOKEN", description: "to push the release", status: "pending", providerSessionId: "provider-session:a" },
    { createdAt: NOW },
  );

describe("secret_request.record", () => {
  it("opens a pending secret_request item on the run that asked; its id is the request id", () => {
    given(...rootWithRun())
      .when(pending())
      .then([itemEvent(requestItem())]);
  });

  it("refuses recording the same request twice, and a run of another thread", () => {
    const history = step(rootWithRun(), pending(), setupContext());
    given(...history).when(pending()).thenRejects(RejectionCode.secretRequestNotPending);
    given(...rootWithRun()).when(pending({ runId: "run:elsewhere" })).thenRejects(RejectionCode.runNotFound);
  });

  it("provided: the item records it and a follow-up run carrying a notification starts on an idle thread", () => {
    const ctx = setupContext();
    const history = step(step(rootWithRun(), pending(), ctx), turnEnds(ROOT, ROOT_RUN), ctx);
    const before = fold(history);
    const item = before.turnItems.get(ROOT)!.find((candidate) => candidate.id === REQUEST)!;
    const run = aRun(before.threads.get(ROOT)!, { id: w("run", 2), ordinal: 2, kind: "system_follow_up", status: "queued", messageId: null, createdAt: NOW, updatedAt: NOW });
    const text = [
      'The owner provided the secret "deploy token".',
      "It is in the environment variable DEPLOY_TOKEN of the commands you run from this turn on, in this session only.",
      "Use it by name; never print it or write it into files, messages or tool arguments.",
    ].join(" ");
    given(...history)
      .when(outcome("provided"), labelledContext("w"))
      .then(
        [
          itemEvent(after(item, { status: "provided" })),
          runCreated(run),
          itemEvent(
            anItem(
              ROOT,
              run.id,
              2,
              w("turn-item", 3),
              { type: "notification", title: "Secret provided: deploy token", text, sourceThreadId: null, taskId: null, requestId: null, delivery: "queued" },
              { createdAt: NOW },
            ),
          ),
          runUpdated(after(run, { status: "starting" })),
        ],
        [effects.startTurn(ROOT, run.id)],
      );
  });

  it("never steers the notice: a running steerable turn gets a queued follow-up, whose turn starts with the secret", () => {
    const history = step(rootWithRun("steerable"), pending(), setupContext());
    const state = fold(given(...history).when(outcome("provided"), labelledContext("w")).thenHistory());
    expect(state.runs.get(w("run", 2))).toMatchObject({ status: "queued", queueRank: 0, kind: "system_follow_up" });
    expect(state.runs.get(ROOT_RUN)?.status).toBe("running");
  });

  it("declined tells the agent too; cancelled records it without a notice", () => {
    const history = step(rootWithRun("plain"), pending(), setupContext());
    const declined = fold(given(...history).when(outcome("declined"), labelledContext("w")).thenHistory());
    const notice = declined.turnItems.get(ROOT)!.find((item) => item.type === "notification");
    expect(notice).toMatchObject({ title: "Secret declined: deploy token" });
    const cancelled = fold(given(...history).when(outcome("cancelled"), labelledContext("w")).thenHistory());
    expect(cancelled.turnItems.get(ROOT)!.find((item) => item.id === REQUEST)).toMatchObject({ status: "cancelled" });
    expect(cancelled.turnItems.get(ROOT)!.some((item) => item.type === "notification")).toBe(false);
  });

  it("refuses an outcome for an unknown request and a second outcome", () => {
    given(...rootWithRun()).when(outcome("provided")).thenRejects(RejectionCode.secretRequestNotFound);
    const ctx = setupContext();
    const answered = step(step(rootWithRun(), pending(), ctx), outcome("declined"), ctx);
    given(...answered).when(outcome("provided")).thenRejects(RejectionCode.secretRequestNotPending);
  });
});
