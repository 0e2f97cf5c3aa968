import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, childScript } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { ServeRig } from "../../testkit/serveRig.js";
import { pollUntil } from "../../testkit/poll.js";

/**
 * kill -9 the built `loom serve` while a parent's completion notice run is
 * starting (its agent process is still opening), restart on the same state
 * dir: the lost notice is delivered again on a new run, and the parent's
 * agent receives it exactly once. Runs against dist/: `npm run build` first.
 */

interface ReadResult {
  thread: { threadId: string; activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string }[];
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

/** `slow` opens its agent slowly enough that the test can kill the server while a run on it is starting. */
function writeConfig(startupDelayMs: number): void {
  const providers = [...DELEGATION_PROVIDERS, { id: "slow", driver: "scripted", options: { startupDelayMs } }];
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers, projects: [{ id: "default", root: dir }] }));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-notice-crash-"));
  stateDir = join(dir, "state");
  mkdirSync(stateDir);
  rig = new ServeRig(stateDir, "notice-crash-test");
  writeConfig(600_000);
});
afterAll(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("crash while a completion notice run is starting", () => {
  it("delivers the notice again after the restart, and the parent's agent receives it once", async () => {
    const first = await rig.start();
    const parent = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Parent",
      message: script({ call: "delegate_task", args: { task: childScript({ sleep: 60_000 }), target: { providerInstanceId: "b" } }, as: "t" }, { say: "{{t.taskId}}" }),
      target: { providerInstanceId: "a" },
    });
    const launched = await first.client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 10_000 });
    expect(launched.status).toBe("completed");
    const taskId = launched.result;
    const running = await pollUntil(
      () => first.client.ok<{ status: string; childThreadId: string }>("task_status", { taskId }),
      (status) => status.status === "running",
      "the task to run",
    );
    // The parent's next run goes to `slow`; interrupting the child ends the task, whose notice run then starts there.
    await first.client.ok("t3_thread_configure", { threadId: parent.threadId, providerInstanceId: "slow" });
    await first.client.ok("t3_thread_interrupt", { threadId: running.childThreadId });
    const starting = await pollUntil(
      () => first.client.ok<ReadResult>("t3_thread_read", { threadId: parent.threadId, view: "activity" }),
      (read) => read.runs.length === 2 && read.runs[1]!.status === "starting",
      "the notice run to be starting",
    );
    const lostRunId = starting.runs[1]!.runId;

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");
    writeConfig(0);

    const second = await rig.start();
    const settled = await pollUntil(
      () => second.client.ok<ReadResult>("t3_thread_read", { threadId: parent.threadId, view: "activity", afterPosition: -1 }),
      (read) => read.runs.length >= 3 && read.thread.activeRunId === null,
      "the notice to be delivered again",
    );
    expect(settled.runs.slice(1).map((run) => [run.runId === lostRunId, run.status, run.endReason])).toEqual([
      [true, "interrupted", "server_restarted"],
      [false, "completed", "completed"],
    ]);

    // Another turn later: nothing else arrives, and the agent's echo of the notice exists once.
    const later = await second.client.ok<{ runId: string }>("t3_thread_send", { threadId: parent.threadId, message: "anything else?", mode: "queue" });
    await second.client.ok("t3_thread_wait", { threadId: parent.threadId, runId: later.runId, timeoutMs: 10_000 });
    const read = await second.client.ok<ReadResult>("t3_thread_read", { threadId: parent.threadId, view: "activity", afterPosition: -1 });
    expect(read.runs).toHaveLength(4);
    const notices = read.items.filter((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`));
    expect(notices.map((item) => item.runId)).toEqual([lostRunId, settled.runs[2]!.runId]);
    const echoes = read.items.filter((item) => item.type === "assistant_message" && item.text.includes(`taskId ${taskId}`));
    expect(echoes.map((item) => item.runId)).toEqual([settled.runs[2]!.runId]);
  });
});
