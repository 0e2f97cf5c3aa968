import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BackgroundWaitOutput } from "../../contracts/tools/backgroundTools.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { processAlive } from "../../testkit/loomProcess.js";
import { ManualClock } from "../../testkit/manualClock.js";

/**
 * A run settling background work, end to end: a real Loom server on a
 * SQLite file, the scripted agent leaving a real shell running past its
 * turn (it waits for a file the test writes, or is killed), real MCP calls,
 * and a manual clock for the settle bound.
 */

const SETTLE_BOUND_MS = 30 * 60_000;
let loom: LoomHarness;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock(Date.now());
  loom = await LoomHarness.start({ clock: clock.now, schedulerTimers: clock.timers });
});

afterEach(async () => {
  await loom.close();
});

/** A shell that writes its pid, then runs until the file `name` exists. */
const waitsFor = (name: string) => `echo $$ > ${name}.pid; while [ ! -f ${name} ]; do sleep 0.05; done`;

/** A thread whose turn leaves `waitsFor(name)` running, awaited, and says so; resolves once its run is settling. */
async function settlingThread(name: string) {
  const launched = await loom.launch({
    message: script({ background: waitsFor(name), awaited: true }, { say: "left it running" }),
    title: name,
    target: { providerInstanceId: "scripted" },
  });
  const run = await loom.waitForRun(launched.runId!, "settling_background_work", 20_000);
  const pidFile = join(loom.dir, `${name}.pid`);
  const pid = Number(await loom.until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim(), "the background shell's pid", 20_000));
  return { threadId: launched.threadId, run, pid };
}

/** The data of every run.background-work-cancelled of the thread in the log. */
async function cancellations(threadId: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  const subscription = loom.server.orchestrator.follow(0, (event) => {
    if (event.type === "run.background-work-cancelled" && event.streamId === threadId) seen.push(event.data);
  });
  await subscription.caughtUp;
  subscription.close();
  return seen;
}

const pending = (threadId: string) => loom.state.threads.get(threadId)!.pendingBackgroundTasks;
const notices = (threadId: string) => loom.items(threadId).flatMap((item) => (item.type === "system_notice" ? [item.text] : []));

describe("a run whose turn leaves awaited work running", () => {
  it("settles, shows so in every read, and completes when the work ends", async () => {
    const { threadId, run } = await settlingThread("release-a");
    expect(loom.assistantTexts(threadId), dump(loom, threadId)).toEqual(["left it running"]);
    expect(run.backgroundSettleBy).toBe(new Date(Date.parse(run.updatedAt) + SETTLE_BOUND_MS).toISOString());
    expect(pending(threadId)).toMatchObject([{ kind: "command", awaited: true, runId: run.id, nativeTaskId: "bg-1", title: waitsFor("release-a") }]);

    const read = await loom.owner.ok<{ thread: Record<string, unknown> }>("t3_thread_read", { threadId });
    const text = `settling background work: ${waitsFor("release-a")} (command); Loom stops waiting at ${run.backgroundSettleBy!.slice(11, 16)} UTC`;
    expect(read.thread).toMatchObject({ status: "settling_background_work", activeRunId: run.id, pendingBackgroundTasks: 1, backgroundWork: text });
    const tree = (await (await fetch(`${loom.server.url}/api/threads/tree?root=${encodeURIComponent(threadId)}`, { headers: { authorization: `Bearer ${loom.ownerToken}` } })).json()) as {
      roots: Record<string, unknown>[];
    };
    expect(tree.roots[0]).toMatchObject({ threadId, status: "settling_background_work", waitingOn: text });
    const early = await loom.owner.ok<BackgroundWaitOutput>("t3_background_wait", { threadId, timeoutMs: 1 });
    expect(early).toMatchObject({ settled: false, waitTimedOut: true, backgroundTasks: [{ kind: "command", awaited: true, title: waitsFor("release-a") }] });

    // A wait begun while it settles answers when the work ends.
    const waiting = loom.owner.ok<BackgroundWaitOutput>("t3_background_wait", { threadId, timeoutMs: 20_000 });
    writeFileSync(join(loom.dir, "release-a"), "");
    expect(await loom.waitForEnd(run.id, 20_000)).toMatchObject({ status: "completed", endReason: "completed" });
    expect(await waiting).toMatchObject({ settled: true, waitTimedOut: false, backgroundTasks: [] });
    expect(pending(threadId)).toEqual([]);
    const after = await loom.owner.ok<{ thread: Record<string, unknown> }>("t3_thread_read", { threadId });
    expect(after.thread).toMatchObject({ status: "completed", pendingBackgroundTasks: 0 });
    expect(after.thread.backgroundWork).toBeUndefined();
  });

  it("a delegated child settling its work keeps its task running, shown by task_status, and its end publishes the result", async () => {
    const child = script({ background: waitsFor("release-e"), awaited: true }, { say: "child result" });
    const parent = await loom.launch({
      message: script({ call: "delegate_task", args: { task: child, target: { providerInstanceId: "scripted" }, mode: "async" }, as: "task" }, { say: "delegated" }),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await loom.waitForEnd(parent.runId!, 20_000), dump(loom, parent.threadId)).toMatchObject({ status: "completed" });
    const task = [...loom.state.tasks.values()].find((candidate) => candidate.parentThreadId === parent.threadId)!;
    await loom.waitForRun(task.childRunId!, "settling_background_work", 20_000);
    const status = await loom.owner.ok<Record<string, unknown>>("task_status", { taskId: task.taskId });
    expect(status).toMatchObject({ status: "running", workState: "working", summary: null, backgroundWork: `settling background work: ${waitsFor("release-e")} (command); Loom stops waiting at ${loom.run(task.childRunId!).backgroundSettleBy!.slice(11, 16)} UTC` });
    writeFileSync(join(loom.dir, "release-e"), "");
    await loom.until(() => loom.state.tasks.get(task.taskId)?.resultContextTransferId, "the task's result", 20_000);
    const done = await loom.owner.ok<Record<string, unknown>>("task_status", { taskId: task.taskId });
    expect(done).toMatchObject({ status: "completed", workState: "result_available", summary: "child result" });
    expect(done.backgroundWork).toBeUndefined();
  });

  it("is interrupted by t3_thread_interrupt: its shell is killed, the cancellation recorded, nothing left pending", async () => {
    const { threadId, run, pid } = await settlingThread("never-b");
    expect(processAlive(pid)).toBe(true);
    await loom.owner.ok("t3_thread_interrupt", { threadId });
    expect(await loom.waitForEnd(run.id, 20_000)).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    expect(pending(threadId)).toEqual([]);
    await loom.until(() => !processAlive(pid), "the background shell to be killed", 20_000);
    expect(await cancellations(threadId)).toMatchObject([{ runId: run.id, reason: "interrupted_by_user", cancelled: [{ nativeTaskId: "bg-1" }] }]);
  });

  it("stops being waited for at its bound on the manual clock: the work is cancelled and the run completes with a notice", async () => {
    const { threadId, run, pid } = await settlingThread("never-c");
    const armed = clock.armed;
    await loom.until(() => clock.armed > armed || clock.armed >= 1, "the background settler to arm");
    // The bound is the decision's time plus 30 minutes; the manual clock may have started a little before it.
    clock.advance(Date.parse(run.backgroundSettleBy!) - clock.now() - 1);
    expect(loom.run(run.id).status).toBe("settling_background_work");
    clock.advance(1);
    expect(await loom.waitForEnd(run.id, 20_000)).toMatchObject({ status: "completed", endReason: "background_work_timed_out" });
    expect(notices(threadId).join("\n")).toMatch(/stopped waiting for this run's background work after 30 minutes and cancelled it/);
    expect(pending(threadId)).toEqual([]);
    await loom.until(() => !processAlive(pid), "the background shell to be killed", 20_000);
  });

  it("across a restart: the work ended with the old server, so the restarted one finds the run completed, the loss recorded", async () => {
    const { threadId, run, pid } = await settlingThread("never-d");
    loom = await loom.restart();
    expect(loom.run(run.id)).toMatchObject({ status: "completed", endReason: "background_work_lost" });
    expect(pending(threadId)).toEqual([]);
    expect(notices(threadId).join("\n")).toMatch(/background work ended with its provider session/);
    expect(await cancellations(threadId)).toMatchObject([{ runId: run.id, cancelled: [{ nativeTaskId: "bg-1" }] }]);
    await loom.until(() => !processAlive(pid), "the background shell to be gone", 20_000);
  });
});
