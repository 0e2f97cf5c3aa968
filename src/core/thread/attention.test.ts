import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, CREATED_AT, existing } from "../testing/fixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const A = "thread:a";
const TOMORROW = "2026-03-02T12:00:00.000Z";
const EARLIER = "2026-03-01T11:30:00.000Z";

describe("thread.settle", () => {
  it("settles and drops the active rank, keeping a pin", () => {
    const thread = aThread({ id: A, activeRank: 1, pinnedRank: 0 });
    given(existing(thread))
      .when(cmd("thread.settle", { threadId: A }))
      .then([threadEvent("thread.settled", { ...thread, settledAt: NOW, updatedAt: NOW, activeRank: null })]);
  });

  it("settles even with auto-settle off and work pending: a manual settle is the user's call", () => {
    const thread = aThread({ id: A, autoSettle: false, queuedRuns: [{ runId: "run:1", held: false }] });
    given(existing(thread))
      .when(cmd("thread.settle", { threadId: A }))
      .then([threadEvent("thread.settled", { ...thread, settledAt: NOW, updatedAt: NOW })]);
  });

  it("rejects a settled thread", () => {
    given(existing(aThread({ id: A, settledAt: CREATED_AT })))
      .when(cmd("thread.settle", { threadId: A }))
      .thenRejects(RejectionCode.threadAlreadySettled);
  });
});

describe("thread.unsettle", () => {
  it("clears settledAt", () => {
    const thread = aThread({ id: A, settledAt: CREATED_AT });
    given(existing(thread))
      .when(cmd("thread.unsettle", { threadId: A }))
      .then([threadEvent("thread.unsettled", { ...thread, settledAt: null, updatedAt: NOW })]);
  });

  it("rejects a thread that is not settled", () => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.unsettle", { threadId: A }))
      .thenRejects(RejectionCode.threadNotSettled);
  });
});

describe("thread.auto-settle", () => {
  it("emits thread.settled when auto-settle is on and nothing holds the thread", () => {
    // A command or monitor that is not awaited does not hold the thread (a dev server left running).
    const thread = aThread({
      id: A,
      activeRank: 0,
      pendingBackgroundTasks: [
        { id: "task:dev-server", kind: "command" },
        { id: "task:watch", kind: "monitor" },
      ],
    });
    given(existing(thread))
      .when(cmd("thread.auto-settle", { threadId: A }))
      .then([threadEvent("thread.settled", { ...thread, settledAt: NOW, updatedAt: NOW, activeRank: null })]);
  });

  it("rejects when auto-settle is off", () => {
    given(existing(aThread({ id: A, autoSettle: false })))
      .when(cmd("thread.auto-settle", { threadId: A }))
      .thenRejects(RejectionCode.autoSettleDisabled);
  });

  it("rejects a settled thread", () => {
    given(existing(aThread({ id: A, settledAt: CREATED_AT })))
      .when(cmd("thread.auto-settle", { threadId: A }))
      .thenRejects(RejectionCode.threadAlreadySettled);
  });

  it.each([
    ["a queued run", { queuedRuns: [{ runId: "run:2", held: true }] }],
    ["a subagent", { pendingBackgroundTasks: [{ id: "subagent:1", kind: "subagent" as const }] }],
    ["a background task", { pendingBackgroundTasks: [{ id: "task:1", kind: "background_task" as const }] }],
    ["an awaited command", { pendingBackgroundTasks: [{ id: "task:2", kind: "command" as const, awaited: true as const }] }],
  ])("rejects while %s holds the thread", (_what, work) => {
    given(existing(aThread({ id: A, ...work })))
      .when(cmd("thread.auto-settle", { threadId: A }))
      .thenRejects(RejectionCode.threadWorkPending);
  });
});

describe("thread.auto-settle.set", () => {
  it("turns auto-settle off", () => {
    const thread = aThread({ id: A });
    given(existing(thread))
      .when(cmd("thread.auto-settle.set", { threadId: A, autoSettle: false }))
      .then([threadEvent("thread.auto-settle-set", { ...thread, autoSettle: false, updatedAt: NOW })]);
  });

  it("turns auto-settle on", () => {
    const thread = aThread({ id: A, autoSettle: false });
    given(existing(thread))
      .when(cmd("thread.auto-settle.set", { threadId: A, autoSettle: true }))
      .then([threadEvent("thread.auto-settle-set", { ...thread, autoSettle: true, updatedAt: NOW })]);
  });

  it("rejects the value the thread already has", () => {
    given(existing(aThread({ id: A, autoSettle: true })))
      .when(cmd("thread.auto-settle.set", { threadId: A, autoSettle: true }))
      .thenRejects(RejectionCode.autoSettleUnchanged);
  });
});

describe("thread.snooze", () => {
  it("snoozes until a later instant, normalized to UTC", () => {
    const thread = aThread({ id: A });
    const state = given(existing(thread))
      .when(cmd("thread.snooze", { threadId: A, until: "2026-03-02T14:00:00+02:00" }))
      .then([threadEvent("thread.snoozed", { ...thread, snoozedUntil: TOMORROW, snoozedAt: NOW, updatedAt: NOW })]);
    expect(state.threads.get(A)?.snoozedUntil).toBe(TOMORROW);
  });

  it("reschedules a snoozed thread to a different instant", () => {
    const thread = aThread({ id: A, snoozedUntil: TOMORROW, snoozedAt: CREATED_AT });
    const later = "2026-03-03T09:00:00.000Z";
    given(existing(thread))
      .when(cmd("thread.snooze", { threadId: A, until: later }))
      .then([threadEvent("thread.snoozed", { ...thread, snoozedUntil: later, snoozedAt: NOW, updatedAt: NOW })]);
  });

  it.each([
    ["now", NOW],
    ["the past", EARLIER],
  ])("rejects an until that is %s", (_when, until) => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.snooze", { threadId: A, until }))
      .thenRejects(RejectionCode.invalidSnoozeTime);
  });

  it("rejects an unparseable until when called directly", () => {
    const bad = { ...cmd("thread.snooze", { threadId: A, until: TOMORROW }), data: { threadId: A, until: "tomorrow" } };
    given(existing(aThread({ id: A }))).whenUnparsed(bad).thenRejects(RejectionCode.invalidSnoozeTime);
  });

  it("rejects the same instant the thread is already snoozed until", () => {
    given(existing(aThread({ id: A, snoozedUntil: TOMORROW, snoozedAt: CREATED_AT })))
      .when(cmd("thread.snooze", { threadId: A, until: "2026-03-02T12:00:00Z" }))
      .thenRejects(RejectionCode.threadAlreadySnoozed);
  });
});

describe("thread.unsnooze", () => {
  it("ends a snooze in force", () => {
    const thread = aThread({ id: A, snoozedUntil: TOMORROW, snoozedAt: CREATED_AT });
    given(existing(thread))
      .when(cmd("thread.unsnooze", { threadId: A }))
      .then([threadEvent("thread.unsnoozed", { ...thread, snoozedUntil: null, snoozedAt: null, updatedAt: NOW })]);
  });

  it("rejects a thread that was never snoozed", () => {
    given(existing(aThread({ id: A })))
      .when(cmd("thread.unsnooze", { threadId: A }))
      .thenRejects(RejectionCode.threadNotSnoozed);
  });

  it("rejects a snooze whose time has passed: the thread already woke", () => {
    given(existing(aThread({ id: A, snoozedUntil: EARLIER, snoozedAt: CREATED_AT })))
      .when(cmd("thread.unsnooze", { threadId: A }))
      .thenRejects(RejectionCode.threadNotSnoozed);
  });
});

describe("thread.visit", () => {
  it("records the visit and clears an unread mark", () => {
    const thread = aThread({ id: A, lastVisitedAt: CREATED_AT, markedUnreadAt: EARLIER });
    given(existing(thread))
      .when(cmd("thread.visit", { threadId: A }))
      .then([threadEvent("thread.visited", { ...thread, lastVisitedAt: NOW, markedUnreadAt: null, updatedAt: NOW })]);
  });

  it("records a first visit", () => {
    const thread = aThread({ id: A });
    const state = given(existing(thread))
      .when(cmd("thread.visit", { threadId: A }))
      .then([threadEvent("thread.visited", { ...thread, lastVisitedAt: NOW, updatedAt: NOW })]);
    expect(state.threads.get(A)?.lastVisitedAt).toBe(NOW);
  });
});

describe("thread.mark-unread", () => {
  it("marks a read thread unread, keeping lastVisitedAt", () => {
    const thread = aThread({ id: A, lastVisitedAt: EARLIER });
    given(existing(thread))
      .when(cmd("thread.mark-unread", { threadId: A }))
      .then([threadEvent("thread.marked-unread", { ...thread, markedUnreadAt: NOW, updatedAt: NOW })]);
  });

  it("rejects a thread already marked unread", () => {
    given(existing(aThread({ id: A, markedUnreadAt: EARLIER })))
      .when(cmd("thread.mark-unread", { threadId: A }))
      .thenRejects(RejectionCode.threadAlreadyUnread);
  });
});
