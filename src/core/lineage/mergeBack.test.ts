import { describe, expect, it } from "vitest";
import type { ContextTransfer } from "../../contracts/entities/contextTransfers.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { ENDED, threadHistory } from "../testing/lineageFixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { fold, given, testContext } from "../testing/scenario.js";

const S = "thread:source";
const F = "thread:fork";
const source = aProviderThread(S, "steerable", { title: "Research" });

describe("thread.merge_back", () => {
  const forkThread = aProviderThread(F, "plain", { title: "Experiment", lineage: { rootThreadId: S, parentThreadId: S, parentNodeId: null, relation: "fork" } });
  const base = [...threadHistory(source, 1), ...threadHistory(forkThread, 2)];

  it("sends the fork's finished runs into the source as a pending merge_back transfer, with a notification there", () => {
    const decision = given(...base).when(cmd("thread.merge_back", { threadId: F })).decision;
    expect(decision.kind).toBe("accepted");
    if (decision.kind !== "accepted") return;
    const transfer = (decision.events[0]!.data as { transfer: ContextTransfer }).transfer;
    expect(transfer).toMatchObject({ threadId: S, sourceThreadId: F, kind: "merge_back", status: "pending", runId: `${F}:run:2`, coveredRunOrdinals: { from: 1, to: 2 } });
    expect(transfer.text).toMatch(/^<merge_back from_thread="thread:fork" relation="fork" runs="1-2">/);
    expect(transfer.text).toContain("<assistant>answer 2</assistant>");
    expect(decision.events[1]!.data).toMatchObject({ item: { type: "notification", threadId: S, title: "Merged back from Experiment", sourceThreadId: F } });
    expect((decision.events[1]!.data as { item: { text: string } }).item.text).toMatch(/merged back runs 1-2 \(\d+ bytes\); the next run of this thread receives it/);
  });

  it("covers only runs finished since the last merge back, and reaches the source's next run", () => {
    const ctx = testContext();
    const merged = given(...base).when(cmd("thread.merge_back", { threadId: F }), ctx).thenHistory();
    given(...merged).when(cmd("thread.merge_back", { threadId: F }), ctx).thenRejects(RejectionCode.nothingToMerge);
    const third = aRun(forkThread, { id: `${F}:run:3`, ordinal: 3, status: "completed", messageId: null, endedAt: ENDED });
    const mergedAgain = given(...merged, runCreated(third)).when(cmd("thread.merge_back", { threadId: F, summary: "It worked." }), ctx).thenHistory();
    const transfers = [...fold(...mergedAgain).transfers.values()];
    expect(transfers.map((t) => t.coveredRunOrdinals)).toEqual([
      { from: 1, to: 2 },
      { from: 3, to: 3 },
    ]);
    expect(transfers[1]!.text).toContain("<summary>It worked.</summary>");
    expect(transfers[1]!.text).not.toContain("<run ");
    const delivered = fold(...given(...mergedAgain).when(cmd("message.dispatch", { threadId: S, text: "what happened?", runId: "run:s2", messageId: "message:s2" }), ctx).thenHistory());
    expect([...delivered.transfers.values()].map((t) => [t.status, t.deliveredRunId])).toEqual([
      ["consumed", "run:s2"],
      ["consumed", "run:s2"],
    ]);
  });

  it("rejects a thread without a source, a fork with nothing finished, and a transfer id in use", () => {
    given(...threadHistory(source, 1)).when(cmd("thread.merge_back", { threadId: S })).thenRejects(RejectionCode.noMergeSource);
    const running = threadHistory(forkThread, 1, () => ({ status: "running", endReason: null, endedAt: null }));
    given(existing(source), ...running).when(cmd("thread.merge_back", { threadId: F })).thenRejects(RejectionCode.nothingToMerge);
    const merged = given(...base).when(cmd("thread.merge_back", { threadId: F, transferId: "t:1" })).thenHistory();
    given(...merged).when(cmd("thread.merge_back", { threadId: F, summary: "more", transferId: "t:1" })).thenRejects(RejectionCode.transferAlreadyExists);
    given(existing(forkThread)).when(cmd("thread.merge_back", { threadId: F, summary: "x" })).thenRejects(RejectionCode.threadNotFound);
  });
});
