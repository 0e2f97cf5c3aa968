import { describe, expect, it } from "vitest";
import { cmd } from "../testing/fixtures.js";
import { labelledContext } from "../testing/delegationFixtures.js";
import { given } from "../testing/scenario.js";

/** provider-instance.limit-window.record (docs/limits.md, "Unavailable until the reset"): one window per instance, the latest reset. */

const NOW = labelledContext("w").now;
const later = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const windowEvent = (resetAt: string, providerInstanceId = "claude") => ({
  type: "provider-instance.limit-window-updated" as const,
  streamId: "",
  data: { window: { providerInstanceId, resetAt, message: "You've hit your limit", recordedAt: NOW } },
});
const record = (resetAt: string, providerInstanceId = "claude") => cmd("provider-instance.limit-window.record", { providerInstanceId, resetAt, message: "You've hit your limit" });

describe("provider-instance.limit-window.record", () => {
  it("records the instance's window environment-wide", () => {
    given().when(record(later(3_600_000)), labelledContext("w")).then([windowEvent(later(3_600_000))]);
  });

  it("moves the window to a later reset, and keeps it against an earlier or the same one and a reset already past", () => {
    const first = given().when(record(later(3_600_000)), labelledContext("w")).thenHistory();
    expect(given(...first).when(record(later(7_200_000)), labelledContext("w")).then([windowEvent(later(7_200_000))]).limitWindows.get("claude")?.resetAt).toBe(later(7_200_000));
    given(...first).when(record(later(3_600_000)), labelledContext("w")).then([]);
    given(...first).when(record(later(60_000)), labelledContext("w")).then([]);
    given().when(record(later(-1)), labelledContext("w")).then([]);
    // Another instance has a window of its own.
    const both = given(...first).when(record(later(60_000), "codex"), labelledContext("w")).then([windowEvent(later(60_000), "codex")]);
    expect([...both.limitWindows.keys()]).toEqual(["claude", "codex"]);
  });
});
