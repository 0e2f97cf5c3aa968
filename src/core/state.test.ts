import { describe, expect, it } from "vitest";
import { type ThreadEventType, decodeDomainEvent, threadEvent } from "../contracts/events.js";
import { evolve, initialState } from "./state.js";
import { aThread } from "./testing/fixtures.js";

/** The 20 thread events the lifecycle and organization commands emit (spec 004 §3.2 names). */
const THREAD_EVENTS: readonly ThreadEventType[] = [
  "thread.created",
  "thread.archived",
  "thread.unarchived",
  "thread.deleted",
  "thread.settled",
  "thread.unsettled",
  "thread.auto-settle-set",
  "thread.snoozed",
  "thread.unsnoozed",
  "thread.pinned",
  "thread.unpinned",
  "thread.pin-reordered",
  "thread.active-reordered",
  "thread.visited",
  "thread.marked-unread",
  "thread.metadata-updated",
  "thread.pull-request-link-updated",
  "thread.runtime-mode-updated",
  "thread.interaction-mode-updated",
  "thread.model-selection-updated",
];

describe("evolve", () => {
  it.each(THREAD_EVENTS)("decodes %s as a known event and upserts its thread", (type) => {
    const before = aThread({ id: "thread:a", title: "before" });
    const afterChange = aThread({ id: "thread:a", title: `after ${type}` });
    const decoded = decodeDomainEvent(threadEvent(type, afterChange));
    expect(decoded.type).toBe(type);
    const state = evolve(evolve(initialState(), threadEvent("thread.created", before)), decoded);
    expect(state.threads.get("thread:a")?.title).toBe(`after ${type}`);
  });

  it("keeps an unknown event without applying it", () => {
    const state = initialState();
    evolve(state, decodeDomainEvent({ type: "thread.teleported", streamId: "thread:a", data: {} }));
    expect(state.threads.size).toBe(0);
  });
});
