import { describe, expect, it } from "vitest";
import { checksOf, ghPullRequestReader, statusOfGhView } from "./ghPullRequests.js";

const NOW = "2026-03-02T08:00:00.000Z";

describe("gh's pull request JSON", () => {
  it.each([
    ["no checks", [], "none"],
    ["every check run completed successfully", [{ status: "COMPLETED", conclusion: "SUCCESS" }, { state: "SUCCESS" }], "passing"],
    ["a check run still in progress", [{ status: "COMPLETED", conclusion: "SUCCESS" }, { status: "IN_PROGRESS", conclusion: "" }], "pending"],
    ["a pending commit status", [{ state: "PENDING" }], "pending"],
    ["a failed check run, even beside a pending one", [{ status: "IN_PROGRESS", conclusion: "" }, { status: "COMPLETED", conclusion: "FAILURE" }], "failing"],
    ["an errored commit status", [{ state: "ERROR" }], "failing"],
  ])("combines the checks when %s", (_what, rollup, expected) => {
    expect(checksOf(rollup)).toBe(expected);
  });

  it("maps state and review decision, and keeps title and number", () => {
    expect(statusOfGhView({ state: "MERGED", reviewDecision: "CHANGES_REQUESTED", title: "T", number: 3, statusCheckRollup: [] }, NOW)).toEqual({
      status: { state: "merged", reviewDecision: "changes_requested", checks: "none", syncedAt: NOW },
      title: "T",
      number: 3,
    });
    expect(statusOfGhView({ state: "CLOSED", reviewDecision: "" }, NOW).status.reviewDecision).toBeNull();
  });

  it("refuses an answer that is not a pull request state", () => {
    expect(() => statusOfGhView({ state: "DRAFTED" }, NOW)).toThrow(/unknown pull request state/);
  });

  it("reports a missing gh as the reason, with no status", async () => {
    const read = ghPullRequestReader("/nonexistent/loom-test-gh");
    expect(await read("https://github.com/a/b/pull/1", NOW)).toEqual({
      url: "https://github.com/a/b/pull/1",
      status: null,
      title: null,
      number: null,
      error: "the GitHub CLI (/nonexistent/loom-test-gh) is not installed or not on PATH",
    });
  });
});
