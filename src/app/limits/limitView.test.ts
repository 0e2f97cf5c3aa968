import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread, ThreadLimitRecovery } from "../../contracts/thread.js";
import { initialState } from "../../core/state.js";
import { limitRecoveryView } from "./limitView.js";

/** What every read says of a thread a limit holds (docs/limits.md): the reset or the retry, for a person, in UTC. */

const RESET = "2026-12-07T14:05:00.000Z";

function viewOf(recovery: ThreadLimitRecovery, laterRun = false) {
  const state = initialState();
  const runs = [{ id: "run:1", ordinal: 1 }, ...(laterRun ? [{ id: "run:2", ordinal: 2 }] : [])] as Run[];
  for (const run of runs) state.runs.set(run.id, run);
  state.threadRuns.set("thread:1", runs.map((run) => run.id));
  return limitRecoveryView(state, { id: "thread:1", limitRecovery: recovery } as AppThread);
}

describe("limitRecoveryView", () => {
  it("says when a usage limit resets and whether the work resumes by itself", () => {
    expect(viewOf({ runId: "run:1", resetAt: RESET, autoResume: true, message: "" })).toEqual({ status: "waiting_on_limit", resetAt: RESET, runId: "run:1", text: "waiting for the limit to reset at 14:05 UTC, resumes by itself" });
    expect(viewOf({ runId: "run:1", resetAt: RESET, autoResume: false, message: "" })?.text).toBe("stopped by a usage limit until 14:05 UTC; send a message to continue");
  });

  it("after an outage, says the work moves once an instance is available, else is tried again then", () => {
    expect(viewOf({ runId: "run:1", resetAt: RESET, autoResume: true, message: "", cause: "outage" })).toEqual({
      status: "waiting_on_limit",
      resetAt: RESET,
      runId: "run:1",
      text: "waiting after provider errors: moves to a failover instance once one is available, else tried again at 14:05 UTC",
    });
  });

  it("says nothing once the thread's work went on", () => {
    expect(viewOf({ runId: "run:1", resetAt: RESET, autoResume: true, message: "", cause: "outage" }, true)).toBeNull();
  });
});
