import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { LIMIT_RESUME_TITLE } from "../../core/run/limitRecovery.js";
import type { ThreadTreeResult } from "../threads/tree.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { ManualClock } from "../../testkit/manualClock.js";

/**
 * Work a usage limit stopped resumes by itself after the reset, once: a real
 * Loom server, a real ACP agent process (the scripted agent) whose prompt
 * fails on a model API's usage limit with a reset time, and a manual clock
 * driving the limit resumer's timer.
 */

const HOUR = 3_600_000;
let agent: ScriptedAgentSetup;
let loom: LoomHarness;
let clock: ManualClock;

beforeEach(async () => {
  agent = scriptedAgentSetup();
  clock = new ManualClock(Date.now());
  const acp = agent.instance({ id: "acp", driver: "acp" });
  loom = await LoomHarness.start({
    config: { providers: [{ id: "acp", driver: "acp", options: acp.options }, { id: "scripted", driver: "scripted" }] },
    clock: clock.now,
    schedulerTimers: clock.timers,
  });
});

afterEach(async () => {
  await loom.close();
  agent.close();
});

/** A parent on the scripted instance delegates to the ACP agent, whose first prompt fails on a usage limit resetting in an hour. */
async function limitedChild(): Promise<{ task: DelegatedTask; resetAt: string }> {
  const resetAt = new Date(clock.now() + HOUR).toISOString();
  const failing = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
  const parent = await loom.launch({
    message: script({ call: "delegate_task", args: { task: failing, target: { providerInstanceId: "acp" }, mode: "async" }, as: "task" }, { say: "delegated" }),
    title: "parent",
    target: { providerInstanceId: "scripted" },
  });
  expect(await loom.waitForEnd(parent.runId!, 20_000), dump(loom, parent.threadId)).toMatchObject({ status: "completed" });
  const task = [...loom.state.tasks.values()].find((candidate) => candidate.parentThreadId === parent.threadId)!;
  await loom.until(() => loom.state.threads.get(task.childThreadId)?.limitRecovery, "the child's limit recovery", 20_000);
  return { task, resetAt };
}

const resumedRuns = (threadId: string) => loom.runs(threadId).filter((run) => run.kind === "system_follow_up");

describe("a run a usage limit stopped", () => {
  it("waits for the reset, snoozed, then resumes as one follow-up run that completes the task", async () => {
    const { task, resetAt } = await limitedChild();
    const child = loom.state.threads.get(task.childThreadId)!;
    expect(child.limitRecovery).toMatchObject({ runId: task.childRunId, resetAt, autoResume: true, snooze: { until: resetAt } });
    expect(child.snoozedUntil).toBe(resetAt);
    expect(loom.run(task.childRunId!).status).toBe("failed");
    expect(loom.state.tasks.get(task.taskId)?.status).toBe("running");
    expect(resumedRuns(task.childThreadId)).toEqual([]);

    // Every read says it waits and resumes by itself; the parent's view of the task waits instead of failing.
    const text = `waiting for the limit to reset at ${resetAt.slice(11, 16)} UTC, resumes by itself`;
    const limitRecovery = { status: "waiting_on_limit", resetAt, runId: task.childRunId, text };
    const status = await loom.owner.ok<Record<string, unknown>>("task_status", { taskId: task.taskId });
    expect(status).toMatchObject({ status: "waiting", workState: "working", summary: null, limitRecovery });
    const read = await loom.owner.ok<{ thread: Record<string, unknown> }>("t3_thread_read", { threadId: task.childThreadId });
    expect(read.thread).toMatchObject({ snoozed: true, snoozedUntil: resetAt, limitRecovery });
    const tree = (await (await fetch(`${loom.server.url}/api/threads/tree?root=${encodeURIComponent(task.childThreadId)}`, { headers: { authorization: `Bearer ${loom.ownerToken}` } })).json()) as ThreadTreeResult;
    expect(tree.roots[0]).toMatchObject({ threadId: task.childThreadId, limit: text });
    const timedOut = await loom.owner.ok<Record<string, unknown>>("t3_thread_wait", { threadId: task.childThreadId, timeoutMs: 1 });
    expect(timedOut).toMatchObject({ runId: task.childRunId, terminal: false, waitTimedOut: true, error: null, limitRecovery });
    // A wait begun during the limit goes on through the reset and answers with the resumed run's end.
    const waiting = loom.owner.ok<Record<string, unknown>>("t3_thread_wait", { threadId: task.childThreadId, timeoutMs: 20_000 });

    await loom.until(() => clock.armed >= 1, "the limit resumer to arm");
    clock.advance(HOUR);
    const [resumed] = await loom.until(() => (resumedRuns(task.childThreadId).length > 0 ? resumedRuns(task.childThreadId) : null), "the resumed run");
    expect(await loom.waitForEnd(resumed!.id, 20_000), dump(loom, task.childThreadId)).toMatchObject({ status: "completed" });
    expect(loom.items(task.childThreadId).find((item) => item.type === "notification")).toMatchObject({ title: LIMIT_RESUME_TITLE, runId: resumed!.id });
    expect(await waiting).toMatchObject({ runId: resumed!.id, status: "completed", terminal: true, waitTimedOut: false });
    const settled = await loom.until(() => (loom.state.tasks.get(task.taskId)?.status === "completed" ? loom.state.tasks.get(task.taskId) : null), "the task to complete");
    expect(settled?.summary).toMatch(/^Echo: /);
    expect(loom.state.threads.get(task.childThreadId)).toMatchObject({ limitRecovery: null, snoozedUntil: null });
    // A late second fire of the same reset (a retry, another node) is refused and starts nothing.
    const late = await loom.server.orchestrator.dispatch({ type: "thread.limit-recovery.resume", commandId: "cmd:test:late-resume", data: { threadId: task.childThreadId, runId: task.childRunId!, resetAt } });
    expect(late).toMatchObject({ status: "rejected", rejection: { code: "limit_recovery_stale" } });
    expect(resumedRuns(task.childThreadId)).toHaveLength(1);
  });

  it("survives a restart between the stop and the reset, and resumes once after it", async () => {
    const { task } = await limitedChild();
    loom = await loom.restart();
    expect(loom.state.threads.get(task.childThreadId)?.limitRecovery).toMatchObject({ runId: task.childRunId });
    await loom.until(() => clock.armed >= 1, "the restarted limit resumer to arm");
    clock.advance(HOUR);
    const [resumed] = await loom.until(() => (resumedRuns(task.childThreadId).length > 0 ? resumedRuns(task.childThreadId) : null), "the resumed run");
    expect(await loom.waitForEnd(resumed!.id, 20_000), dump(loom, task.childThreadId)).toMatchObject({ status: "completed" });
    await loom.until(() => loom.state.tasks.get(task.taskId)?.status === "completed", "the task to complete");
    expect(resumedRuns(task.childThreadId)).toHaveLength(1);
  });
});

describe("an instance with autoResume off", () => {
  it("records the stop and lets the task fail: at the reset the wait is cleared and nothing resumes", async () => {
    await loom.close();
    const acp = agent.instance({ id: "acp", driver: "acp" });
    loom = await LoomHarness.start({
      config: { providers: [{ id: "acp", driver: "acp", options: acp.options, autoResume: false }, { id: "scripted", driver: "scripted" }] },
      clock: clock.now,
      schedulerTimers: clock.timers,
    });
    const { task, resetAt } = await limitedChild();
    expect(loom.state.threads.get(task.childThreadId)?.limitRecovery).toMatchObject({ autoResume: false, resetAt });
    await loom.until(() => loom.state.tasks.get(task.taskId)?.status === "failed", "the task to fail");
    const read = await loom.owner.ok<{ thread: Record<string, unknown> }>("t3_thread_read", { threadId: task.childThreadId });
    expect(read.thread).toMatchObject({ limitRecovery: { status: "stopped_on_limit", resetAt, text: `stopped by a usage limit until ${resetAt.slice(11, 16)} UTC; send a message to continue` } });

    await loom.until(() => clock.armed >= 1, "the limit resumer to arm");
    clock.advance(HOUR);
    await loom.until(() => loom.state.threads.get(task.childThreadId)?.limitRecovery === null, "the recovery to clear at the reset");
    expect(resumedRuns(task.childThreadId)).toEqual([]);
    expect(loom.state.tasks.get(task.taskId)?.status).toBe("failed");
  });
});
