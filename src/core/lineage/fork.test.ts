import { describe, expect, it } from "vitest";
import type { ContextTransfer } from "../../contracts/entities/contextTransfers.js";
import { threadEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { ENDED, threadHistory } from "../testing/lineageFixtures.js";
import { aProviderThread, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";

const S = "thread:source";
const F = "thread:fork";

const source = aProviderThread(S, "steerable", { title: "Research", worktreePath: "/work/repo", branch: "feature" });
const fork = { threadId: F, providerInstanceId: "plain", model: "m1", runtimeMode: "approval-required", interactionMode: "default" } as const;

describe("thread.fork", () => {
  it("creates the fork with lineage fork, a pending fork transfer of the source's transcript, and a fork item in both timelines", () => {
    const decision = given(...threadHistory(source, 3)).when(cmd("thread.fork", { sourceThreadId: S, sourceRunOrdinal: 2, ...fork })).decision;
    expect(decision.kind).toBe("accepted");
    if (decision.kind !== "accepted") return;
    const [created, transferEvent, sourceItem, forkItem] = decision.events;
    expect(created).toEqual(
      threadEvent("thread.created", {
        ...source,
        id: F,
        title: "Fork of Research",
        providerInstanceId: "plain",
        modelSelection: { providerInstanceId: "plain", model: "m1" },
        runtimeMode: "approval-required",
        interactionMode: "default",
        lineage: { rootThreadId: S, parentThreadId: S, parentNodeId: null, relation: "fork" },
        createdBy: "user",
        creationSource: "api",
        createdAt: NOW,
        updatedAt: NOW,
      }),
    );
    const transfer = (transferEvent!.data as { transfer: ContextTransfer }).transfer;
    expect(transfer).toMatchObject({
      id: testId("context-transfer", 1),
      threadId: F,
      sourceThreadId: S,
      kind: "fork",
      status: "pending",
      runId: `${S}:run:2`,
      coveredRunOrdinals: { from: 1, to: 2 },
      deliveredRunId: null,
    });
    expect(transfer.text).toMatch(/^<fork source_thread="thread:source" through_run="2">/);
    expect(transfer.text).toContain("<assistant>answer 2</assistant>");
    expect(transfer.text).not.toContain("question 3");
    const marker = { type: "fork", sourceThreadId: S, targetThreadId: F, sourceRunOrdinal: 2 };
    expect(sourceItem!.data).toMatchObject({ item: { ...marker, threadId: S, runId: null, position: 6 } });
    expect(forkItem!.data).toMatchObject({ item: { ...marker, threadId: F, runId: null, position: 0 } });
    expect(decision.effects).toEqual([]);
  });

  it("forks at the newest run by default, and an empty thread with no transfer", () => {
    const state = fold(...given(...threadHistory(source, 2)).when(cmd("thread.fork", { sourceThreadId: S, ...fork })).thenHistory());
    expect([...state.transfers.values()][0]!.coveredRunOrdinals).toEqual({ from: 1, to: 2 });
    const empty = fold(...given(existing(source)).when(cmd("thread.fork", { sourceThreadId: S, ...fork, title: "Blank" })).thenHistory());
    expect(empty.transfers.size).toBe(0);
    expect(empty.threads.get(F)).toMatchObject({ title: "Blank", lineage: { relation: "fork" } });
    expect(empty.turnItems.get(F)![0]).toMatchObject({ type: "fork", sourceRunOrdinal: null });
  });

  it("delivers the transfer to the fork's first run", () => {
    const ctx = testContext();
    const forked = given(...threadHistory(source, 2)).when(cmd("thread.fork", { sourceThreadId: S, ...fork }), ctx).thenHistory();
    const state = fold(...given(...forked).when(cmd("message.dispatch", { threadId: F, text: "carry on", runId: "run:f1", messageId: "message:f1" }), ctx).thenHistory());
    expect([...state.transfers.values()][0]).toMatchObject({ status: "consumed", consumedAt: NOW, deliveredRunId: "run:f1" });
    expect(state.runs.get("run:f1")).toMatchObject({ status: "starting", providerInstanceId: "plain" });
  });

  it("rejects a fork point past the newest run, an existing id, an unavailable provider and a deleted source", () => {
    given(...threadHistory(source, 2)).when(cmd("thread.fork", { sourceThreadId: S, sourceRunOrdinal: 3, ...fork })).thenRejects(RejectionCode.invalidForkPoint);
    given(existing(source)).when(cmd("thread.fork", { sourceThreadId: S, sourceRunOrdinal: 1, ...fork })).thenRejects(RejectionCode.invalidForkPoint);
    given(existing(source), existing(aProviderThread(F))).when(cmd("thread.fork", { sourceThreadId: S, ...fork })).thenRejects(RejectionCode.threadAlreadyExists);
    given(existing(source)).when(cmd("thread.fork", { sourceThreadId: S, ...fork, providerInstanceId: "nowhere" })).thenRejects(RejectionCode.providerUnavailable);
    given(existing({ ...source, deletedAt: ENDED })).when(cmd("thread.fork", { sourceThreadId: S, ...fork })).thenRejects(RejectionCode.threadDeleted);
    given(existing(source)).when(cmd("thread.fork", { sourceThreadId: S, ...fork, title: "  " })).thenRejects(RejectionCode.invalidTitle);
  });
});
