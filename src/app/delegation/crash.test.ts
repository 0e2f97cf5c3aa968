import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESTART_NOTICE } from "../../engine/reconcile.js";
import { DELEGATION_PROVIDERS, childScript } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";
import { pollUntil } from "../../testkit/poll.js";

/**
 * kill -9 the built `loom serve` while a delegated child with onCrash fail
 * runs, restart on the same state dir: the child's run is interrupted with a
 * notice (the default, resume, is crashResume.test.ts), its task
 * settles interrupted, nothing is duplicated, and a retry of the same
 * delegate_task (same clientRequestId) from a new parent turn returns the
 * same task. Runs against dist/: `npm run build` first.
 */

interface ReadResult {
  thread: { threadId: string; status: string; activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string }[];
}
interface ListResult {
  threads: { threadId: string; relation: string; parentThreadId: string | null }[];
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-delegation-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "delegation-crash-test");
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers: DELEGATION_PROVIDERS, projects: [{ id: "default", root: dir }] }));
});
afterAll(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(): Promise<ServedLoom> {
  return rig.start();
}


/** The parent's delegate step: same clientRequestId in every turn. */
const DELEGATE = {
  call: "delegate_task",
  args: { task: childScript({ sleep: 30_000 }, { say: "never" }), target: { providerInstanceId: "b" }, clientRequestId: "survives-a-crash", onCrash: "fail" },
  as: "t",
};

async function children(client: LoomMcpClient, parentThreadId: string): Promise<string[]> {
  const list = await client.ok<ListResult>("t3_thread_list", { includeSubagents: true, limit: 100 });
  return list.threads.filter((thread) => thread.parentThreadId === parentThreadId).map((thread) => thread.threadId);
}

describe("crash while a delegated child with onCrash fail runs", () => {
  it("interrupts the child, settles the task, duplicates nothing, and a retry returns the same task", async () => {
    const first = await serve();
    const parent = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Parent",
      message: script(DELEGATE, { say: "{{t.taskId}}" }),
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
    await pollUntil(
      () => first.client.ok<ReadResult>("t3_thread_read", { threadId: childThreadId, view: "activity" }),
      (read) => read.runs[0]?.status === "running",
      "the child run to run",
    );

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");

    const second = await serve();
    const child = await second.client.ok<ReadResult>("t3_thread_read", { threadId: childThreadId, view: "activity" });
    expect(child.runs).toEqual([expect.objectContaining({ runId: running.childRunId, status: "interrupted", endReason: "server_restarted" })]);
    expect(child.items.filter((item) => item.type === "system_notice")).toEqual([expect.objectContaining({ runId: running.childRunId, text: RESTART_NOTICE })]);
    expect(child.items.some((item) => item.text === "never")).toBe(false);
    expect(second.serve.stderr()).toContain("1 run(s) interrupted");

    // An owner may read any task.
    const settled = await second.client.ok<DelegateTaskResult>("task_status", { taskId });
    expect(settled).toMatchObject({ taskId, childThreadId, status: "interrupted", workState: "result_available", hasPendingChildRuns: false });
    expect(settled.resultContextTransferId).not.toBeNull();
    expect(await children(second.client, parent.threadId)).toEqual([childThreadId]);

    // A new parent turn retries the same delegation: the same task comes back, settled.
    const retry = await second.client.ok<{ runId: string }>("t3_thread_send", {
      threadId: parent.threadId,
      message: script(DELEGATE, { say: "{{t.taskId}} {{t.status}} {{t.resultContextTransferId}}" }),
      mode: "queue",
    });
    const retried = await second.client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: retry.runId, timeoutMs: 10_000 });
    expect(retried).toMatchObject({ status: "completed", result: `${taskId} interrupted ${settled.resultContextTransferId}` });
    expect(await children(second.client, parent.threadId)).toEqual([childThreadId]);
    const afterRetry = await second.client.ok<ReadResult>("t3_thread_read", { threadId: childThreadId, view: "activity" });
    expect(afterRetry.runs).toHaveLength(1);

    // The parent hears of the interrupted task once, and has exactly one subagent item.
    const parentRead = await pollUntil(
      () => second.client.ok<ReadResult>("t3_thread_read", { threadId: parent.threadId, view: "activity", afterPosition: -1 }),
      (read) => read.thread.activeRunId === null,
      "the parent to be idle",
    );
    expect(parentRead.items.filter((item) => item.type === "subagent")).toHaveLength(1);
    expect(parentRead.items.filter((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`))).toHaveLength(1);
  });
});
