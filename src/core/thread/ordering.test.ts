import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, CREATED_AT, existing } from "../testing/fixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const C = "thread:c";
const D = "thread:d";

/** The state after the change: the given fields plus updatedAt = NOW. */
const after = (thread: AppThread, fields: Partial<AppThread>): AppThread => ({ ...thread, ...fields, updatedAt: NOW });

describe("thread.pin", () => {
  it("pins the first thread at rank 0", () => {
    const a = aThread({ id: A });
    given(existing(a))
      .when(cmd("thread.pin", { threadId: A }))
      .then([threadEvent("thread.pinned", after(a, { pinnedRank: 0 }))]);
  });

  it("appends after the highest rank, even across a gap", () => {
    const a = aThread({ id: A, pinnedRank: 0 });
    const b = aThread({ id: B, pinnedRank: 4 });
    const c = aThread({ id: C });
    given(existing(a), existing(b), existing(c))
      .when(cmd("thread.pin", { threadId: C }))
      .then([threadEvent("thread.pinned", after(c, { pinnedRank: 5 }))]);
  });

  it("rejects a pinned thread", () => {
    given(existing(aThread({ id: A, pinnedRank: 0 })))
      .when(cmd("thread.pin", { threadId: A }))
      .thenRejects(RejectionCode.threadAlreadyPinned);
  });

  it("rejects an archived thread", () => {
    given(existing(aThread({ id: A, archivedAt: CREATED_AT })))
      .when(cmd("thread.pin", { threadId: A }))
      .thenRejects(RejectionCode.threadArchived);
  });
});

describe("thread.unpin", () => {
  it("unpins without renumbering the others", () => {
    const a = aThread({ id: A, pinnedRank: 0 });
    const b = aThread({ id: B, pinnedRank: 1 });
    const state = given(existing(a), existing(b))
      .when(cmd("thread.unpin", { threadId: A }))
      .then([threadEvent("thread.unpinned", after(a, { pinnedRank: null }))]);
    expect(state.threads.get(B)?.pinnedRank).toBe(1);
  });

  it("rejects a thread that is not pinned", () => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.unpin", { threadId: A }))
      .thenRejects(RejectionCode.threadNotPinned);
  });
});

describe("thread.pin.reorder", () => {
  const a = aThread({ id: A, pinnedRank: 0 });
  const b = aThread({ id: B, pinnedRank: 1 });
  const c = aThread({ id: C, pinnedRank: 2 });
  const pinned = [existing(a), existing(b), existing(c)];

  it("emits one event per thread whose rank changed, in the new order", () => {
    // [a, b, c] -> [c, b, a]: b keeps rank 1, so only a and c move.
    const state = given(...pinned)
      .when(cmd("thread.pin.reorder", { threadIds: [C, B, A] }))
      .then([threadEvent("thread.pin-reordered", after(c, { pinnedRank: 0 })), threadEvent("thread.pin-reordered", after(a, { pinnedRank: 2 }))]);
    expect([A, B, C].map((id) => state.threads.get(id)?.pinnedRank)).toEqual([2, 1, 0]);
  });

  it("renumbers gaps to 0..n-1 when the order is kept", () => {
    const x = aThread({ id: A, pinnedRank: 3 });
    const y = aThread({ id: B, pinnedRank: 7 });
    given(existing(x), existing(y))
      .when(cmd("thread.pin.reorder", { threadIds: [A, B] }))
      .then([threadEvent("thread.pin-reordered", after(x, { pinnedRank: 0 })), threadEvent("thread.pin-reordered", after(y, { pinnedRank: 1 }))]);
  });

  it("rejects an order that changes nothing", () => {
    given(...pinned).when(cmd("thread.pin.reorder", { threadIds: [A, B, C] })).thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects an unknown id", () => {
    const rejection = given(...pinned)
      .when(cmd("thread.pin.reorder", { threadIds: [A, B, C, D] }))
      .thenRejects(RejectionCode.invalidReorder);
    expect(rejection.message).toContain(D);
  });

  it("rejects a deleted id", () => {
    given(...pinned, existing(aThread({ id: D, deletedAt: CREATED_AT })))
      .when(cmd("thread.pin.reorder", { threadIds: [D, A, B, C] }))
      .thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects a repeated id", () => {
    given(...pinned).when(cmd("thread.pin.reorder", { threadIds: [C, B, A, C] })).thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects a thread that is not pinned", () => {
    const rejection = given(...pinned, existing(aThread({ id: D })))
      .when(cmd("thread.pin.reorder", { threadIds: [D, C, B, A] }))
      .thenRejects(RejectionCode.invalidReorder);
    expect(rejection.message).toContain("not pinned");
  });

  it("rejects an order that leaves out a pinned thread", () => {
    const rejection = given(...pinned)
      .when(cmd("thread.pin.reorder", { threadIds: [C, A] }))
      .thenRejects(RejectionCode.invalidReorder);
    expect(rejection.message).toContain(B);
  });
});

describe("thread.active.reorder", () => {
  const a = aThread({ id: A, activeRank: 0 });
  const b = aThread({ id: B, activeRank: 1 });
  const c = aThread({ id: C });

  it("ranks the listed threads 0..n-1, one event per changed rank", () => {
    const state = given(existing(a), existing(b), existing(c))
      .when(cmd("thread.active.reorder", { threadIds: [C, A, B] }))
      .then([
        threadEvent("thread.active-reordered", after(c, { activeRank: 0 })),
        threadEvent("thread.active-reordered", after(a, { activeRank: 1 })),
        threadEvent("thread.active-reordered", after(b, { activeRank: 2 })),
      ]);
    expect([C, A, B].map((id) => state.threads.get(id)?.activeRank)).toEqual([0, 1, 2]);
  });

  it("unranks a ranked thread the new order leaves out", () => {
    given(existing(a), existing(b), existing(c))
      .when(cmd("thread.active.reorder", { threadIds: [B] }))
      .then([threadEvent("thread.active-reordered", after(b, { activeRank: 0 })), threadEvent("thread.active-reordered", after(a, { activeRank: null }))]);
  });

  it("rejects an order that changes nothing", () => {
    given(existing(a), existing(b), existing(c))
      .when(cmd("thread.active.reorder", { threadIds: [A, B] }))
      .thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects an unknown id", () => {
    given(existing(a)).when(cmd("thread.active.reorder", { threadIds: [D, A] })).thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects a deleted id", () => {
    given(existing(a), existing(aThread({ id: D, deletedAt: CREATED_AT })))
      .when(cmd("thread.active.reorder", { threadIds: [D, A] }))
      .thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects a repeated id", () => {
    given(existing(a), existing(c))
      .when(cmd("thread.active.reorder", { threadIds: [C, A, C] }))
      .thenRejects(RejectionCode.invalidReorder);
  });

  it.each([
    ["archived", { archivedAt: CREATED_AT }],
    ["settled", { settledAt: CREATED_AT }],
  ])("rejects a thread that is %s: it is not in the active list", (state, fields) => {
    const rejection = given(existing(a), existing(aThread({ id: D, ...fields })))
      .when(cmd("thread.active.reorder", { threadIds: [D, A] }))
      .thenRejects(RejectionCode.invalidReorder);
    expect(rejection.message).toContain(state);
  });
});
