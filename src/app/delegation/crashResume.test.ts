import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, childScript } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";
import { pollUntil } from "../../testkit/poll.js";
import { resumeNotice } from "../../core/run/crashResume.js";

/**
 * kill -9 the built `loom serve` while a delegated child is in the middle of
 * a shell command, restart on the same state dir: the child's run starts
 * again as a second attempt of the same run (onCrash resume, the default for
 * delegated work), its agent is told which call was cut off, the run
 * completes, the task completes with that run's result, and the parent hears
 * of it once. Runs against dist/: `npm run build` first.
 */

interface ReadResult {
  thread: { threadId: string; status: string; activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string; status?: string; exitCode?: number | null }[];
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-crash-resume-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "crash-resume-test");
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers: DELEGATION_PROVIDERS, projects: [{ id: "default", root: dir }] }));
});
afterAll(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The first attempt leaves a marker and hangs in its command; the resumed one finds the marker and ends, reporting the context it received. */
const COMMAND = "if [ -f resume-marker ]; then echo second; else touch resume-marker; sleep 60; fi";
const CHILD_TASK = childScript({ run: COMMAND }, { say: "resumed with: {{context}}" });

describe("crash while a delegated child runs (onCrash resume, the default)", () => {
  it("starts the child's run again after the restart, tells its agent what was cut off, and the task completes once", async () => {
    const first: ServedLoom = await rig.start();
    const parent = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Parent",
      message: script({ call: "delegate_task", args: { task: CHILD_TASK, target: { providerInstanceId: "b" } }, as: "t" }, { say: "{{t.taskId}}" }),
      target: { providerInstanceId: "a" },
    });
    const launched = await first.client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 10_000 });
    expect(launched.status).toBe("completed");
    const taskId = launched.result;
    const running = await pollUntil(
      () => first.client.ok<DelegateTaskResult>("task_status", { taskId }),
      (status) => status.status === "running",
      "the task to run",
    );
    const childThreadId = running.childThreadId;
    // The first attempt is inside its command once the marker exists.
    await pollUntil(
      () => Promise.resolve(existsSync(join(dir, "resume-marker"))),
      (made) => made,
      "the child's command to start",
    );

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");

    const second = await rig.start();
    expect(second.serve.stderr()).toContain("1 run(s) resumed, 0 run(s) interrupted");
    const done = await pollUntil(
      () => second.client.ok<DelegateTaskResult>("task_status", { taskId }),
      (status) => status.status === "completed",
      "the resumed task to complete",
    );
    expect(done.childRunId).toBe(running.childRunId);

    const child = await second.client.ok<ReadResult>("t3_thread_read", { threadId: childThreadId, view: "activity", afterPosition: -1 });
    // One run, resumed rather than replaced, and completed.
    expect(child.runs).toEqual([expect.objectContaining({ runId: running.childRunId, status: "completed" })]);
    expect(child.items.filter((item) => item.type === "system_notice").map((item) => item.text)).toEqual([resumeNotice("server_restarted", 1)]);
    // The cut-off command never reported back (a provider tells a command once it ends); the resumed attempt ran it again and found the marker.
    const commands = child.items.filter((item) => item.type === "command_execution");
    expect(commands).toEqual([expect.objectContaining({ status: "completed", exitCode: 0, text: `$ ${COMMAND}\nsecond\n` })]);
    // The agent was told it is resuming the same message, and to check half-done calls before repeating them.
    const answer = child.items.filter((item) => item.type === "assistant_message").map((item) => item.text);
    expect(answer).toHaveLength(1);
    expect(answer[0]).toContain('<crash_resume reason="server_restarted" attempt="2">');
    expect(answer[0]).toContain("may be half done");

    // The parent hears of the completed task once.
    const parentRead = await pollUntil(
      () => second.client.ok<ReadResult>("t3_thread_read", { threadId: parent.threadId, view: "activity", afterPosition: -1 }),
      (read) => read.thread.activeRunId === null && read.items.some((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`)),
      "the parent to hear of the task",
    );
    expect(parentRead.items.filter((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`))).toHaveLength(1);
    expect(parentRead.items.filter((item) => item.type === "subagent")).toHaveLength(1);
  });
});
