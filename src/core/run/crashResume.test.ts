import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { EffectKind } from "../../contracts/effects.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, asks, delegate, fold, rootWithRun, says, setupContext, step, steps } from "../testing/delegationFixtures.js";
import { anItem, itemEvent } from "../testing/runFixtures.js";
import { given } from "../testing/scenario.js";
import { MAX_CRASH_RESUMES, resumeNotice } from "./crashResume.js";

const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const SESSION = "provider-session:c1";

type Overrides = Parameters<typeof delegate>[3];

/** Root delegated t1; the child's run is on a session, said something, and has a command still running. */
function childWorking(overrides: Overrides = {}): { history: DomainEvent[]; ctx: ReturnType<typeof setupContext> } {
  const ctx = setupContext();
  const history = steps(
    rootWithRun(),
    [
      delegate("t1", ROOT, ROOT_RUN, overrides),
      cmd("provider-runtime.session-opened", { threadId: CHILD, providerSessionId: SESSION, providerInstanceId: "steerable", driver: "scripted" }),
      cmd("provider-runtime.attempt-started", { threadId: CHILD, runId: CHILD_RUN, providerSessionId: SESSION }),
      says(CHILD, CHILD_RUN, "a1", "Half way."),
    ],
    ctx,
  );
  const command = anItem(CHILD, CHILD_RUN, 40, "turn-item:cmd", {
    type: "command_execution",
    command: "npm run migrate",
    cwd: "/work",
    status: "in_progress",
    exitCode: null,
    durationMs: null,
    outputPreview: "",
    outputTruncated: false,
    outputStreamId: null,
  }, { createdAt: ctx.now });
  return { history: [...history, itemEvent(command)], ctx };
}

const attemptsOf = (state: ReturnType<typeof fold>) => (state.runAttempts.get(CHILD_RUN) ?? []).map((id) => state.attempts.get(id)!);

const lost = (runId = CHILD_RUN, threadId = CHILD, reason = "server_restarted", extra: Record<string, unknown> = {}) =>
  cmd("provider-runtime.run-lost", { threadId, runId, status: "interrupted", reason, message: "Loom restarted", ...extra });

describe("a run lost with its server", () => {
  it("resumes a delegated child as a new attempt of the same run: lost attempt abandoned, unfinished calls failed and named, a start effect, the task still working", () => {
    const { history, ctx } = childWorking();
    const decided = given(...history).when(lost(), ctx);
    const state = fold(decided.thenHistory());
    const run = state.runs.get(CHILD_RUN)!;
    expect(run).toMatchObject({ status: "starting", endedAt: null, endReason: null });
    expect(run.resumes).toEqual([{ at: ctx.now, reason: "server_restarted", lostAttemptOrdinal: 1, unfinished: ["command: npm run migrate"] }]);
    expect(attemptsOf(state).map((attempt) => attempt.status)).toEqual(["abandoned"]);
    const items = state.turnItems.get(CHILD) ?? [];
    expect(items.find((item) => item?.id === "turn-item:cmd")).toMatchObject({ status: "failed" });
    expect(items.filter((item) => item?.type === "system_notice").map((item) => (item as { text: string }).text)).toEqual([resumeNotice("server_restarted", 1)]);
    const effects = decided.decision.kind === "accepted" ? decided.decision.effects : [];
    expect(effects.filter((effect) => effect.kind === EffectKind.startTurn)).toEqual([
      expect.objectContaining({ payload: { threadId: CHILD, runId: CHILD_RUN } }),
    ]);
    expect(state.tasks.get(TASK)?.status).toBe("running");
  });

  it("expires the lost attempt's pending question (its asker is gone; the agent asks again)", () => {
    const { history, ctx } = childWorking();
    const asked = step(history, asks(CHILD, CHILD_RUN, "q-native", "Which database?"), ctx);
    const state = fold(step(asked, lost(), ctx));
    expect([...state.runtimeRequests.values()].filter((request) => request.runId === CHILD_RUN).map((request) => request.status)).toEqual(["expired"]);
  });

  it("stays starting when the lost node's session is released after the resume, and the next attempt is the second", () => {
    const { history, ctx } = childWorking();
    const resumed = step(history, lost(CHILD_RUN, CHILD, "node_lost"), ctx);
    const released = step(resumed, cmd("provider-runtime.session-released", { threadId: CHILD, providerSessionId: SESSION, reason: "crashed", message: "node lost" }), ctx);
    expect(fold(released).runs.get(CHILD_RUN)?.status).toBe("starting");
    const next = steps(
      released,
      [
        cmd("provider-runtime.session-opened", { threadId: CHILD, providerSessionId: "provider-session:c2", providerInstanceId: "steerable", driver: "scripted" }),
        cmd("provider-runtime.attempt-started", { threadId: CHILD, runId: CHILD_RUN, providerSessionId: "provider-session:c2" }),
      ],
      ctx,
    );
    const attempts = attemptsOf(fold(next));
    expect(attempts.map((attempt) => [attempt.attemptOrdinal, attempt.status, attempt.providerSessionId])).toEqual([
      [1, "abandoned", SESSION],
      [2, "starting", "provider-session:c2"],
    ]);
    expect(fold(next).runs.get(CHILD_RUN)?.resumes?.[0]?.reason).toBe("node_lost");
  });

  it(`resumes at most ${MAX_CRASH_RESUMES} times; the next loss ends the run interrupted and settles the task`, () => {
    const { history, ctx } = childWorking();
    let events = history;
    for (let n = 1; n <= MAX_CRASH_RESUMES; n++) {
      events = step(events, { ...lost(), commandId: `cmd:lost:${n}` }, ctx);
      expect(fold(events).runs.get(CHILD_RUN)).toMatchObject({ status: "starting" });
    }
    const state = fold(step(events, { ...lost(), commandId: "cmd:lost:last" }, ctx));
    expect(state.runs.get(CHILD_RUN)).toMatchObject({ status: "interrupted", endReason: "server_restarted" });
    expect(state.runs.get(CHILD_RUN)?.resumes).toHaveLength(MAX_CRASH_RESUMES);
    expect(state.tasks.get(TASK)?.status).toBe("interrupted");
  });

  it("ends the run interrupted when the delegation says onCrash fail, even where the instance says resume", () => {
    const { history, ctx } = childWorking({ onCrash: "fail" });
    const state = fold(step(history, lost(CHILD_RUN, CHILD, "server_restarted", { instanceOnCrash: "resume" }), ctx));
    expect(state.runs.get(CHILD_RUN)).toMatchObject({ status: "interrupted", endReason: "server_restarted" });
    expect(state.tasks.get(TASK)?.status).toBe("interrupted");
  });

  it("follows the instance's onCrash where the delegation sets none: fail for a child, resume for a person's own thread", () => {
    const { history, ctx } = childWorking();
    expect(fold(step(history, lost(CHILD_RUN, CHILD, "server_restarted", { instanceOnCrash: "fail" }), ctx)).runs.get(CHILD_RUN)?.status).toBe("interrupted");
    const root = rootWithRun();
    expect(fold(step(root, lost(ROOT_RUN, ROOT), ctx)).runs.get(ROOT_RUN)?.status).toBe("interrupted");
    expect(fold(step(root, lost(ROOT_RUN, ROOT, "server_restarted", { instanceOnCrash: "resume" }), ctx)).runs.get(ROOT_RUN)?.status).toBe("starting");
  });

  it("does not resume a run someone asked to stop, nor for a loss that is not a crash", () => {
    const { history, ctx } = childWorking();
    const stopping = step(history, cmd("run.interrupt", { threadId: CHILD, runId: CHILD_RUN }), ctx);
    expect(fold(step(stopping, lost(), ctx)).runs.get(CHILD_RUN)?.status).toBe("interrupted");
    expect(fold(step(history, lost(CHILD_RUN, CHILD, "session_crashed"), ctx)).runs.get(CHILD_RUN)?.status).toBe("interrupted");
    const failedStart = cmd("provider-runtime.run-lost", { threadId: CHILD, runId: CHILD_RUN, status: "failed", reason: "start_failed", message: "no binary" });
    expect(fold(step(history, failedStart, ctx)).runs.get(CHILD_RUN)?.status).toBe("failed");
  });
});
