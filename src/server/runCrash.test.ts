import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RESTART_NOTICE } from "../engine/reconcile.js";
import { script } from "../testkit/loomHarness.js";
import { waitForExit } from "../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../testkit/serveRig.js";
import type { LoomMcpClient } from "../testkit/mcpClient.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * kill -9 the built `loom serve` while a scripted run is in flight, restart
 * on the same state dir, and check the run was ended (not left running), the
 * queue went on, and the thread takes new work (DESIGN §6, crash).
 */

interface ReadResult {
  thread: { status: string; activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string; level?: string }[];
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-run-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "crash-test");
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }] }));
});
afterEach(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(): Promise<ServedLoom> {
  return rig.start();
}

function readUntil(client: LoomMcpClient, threadId: string, done: (result: ReadResult) => boolean): Promise<ReadResult> {
  return pollUntil(() => client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" }), done, `thread ${threadId}`);
}

describe("crash during a run", () => {
  it("ends the lost run as interrupted after kill -9, continues the queue, and takes new work", async () => {
    const first = await serve();
    const launched = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Doomed", message: script({ sleep: 30_000 }, { say: "never" }) });
    const { threadId, runId } = launched;
    await readUntil(first.client, threadId, (r) => r.runs[0]?.status === "running");
    const queued = await first.client.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId, message: "queued before the crash", mode: "queue" });
    expect(queued.delivery).toBe("queued");

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");

    const second = await serve();
    const lost = await second.client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" });
    expect(lost.runs[0]).toMatchObject({ runId, status: "interrupted", endReason: "server_restarted" });
    const notice = lost.items.find((item) => item.type === "system_notice");
    expect(notice).toMatchObject({ runId, text: RESTART_NOTICE });
    expect(notice!.text).toContain("Loom restarted");
    expect(lost.items.some((item) => item.type === "assistant_message" && item.text === "never")).toBe(false);
    expect(second.serve.stderr()).toContain("1 run(s) interrupted");

    // The run queued before the crash starts on the new process and completes.
    const afterQueue = await second.client.ok<{ status: string; result: string | null }>("t3_thread_wait", { threadId, runId: queued.runId, timeoutMs: 10_000 });
    expect(afterQueue).toMatchObject({ status: "completed", result: "Echo: queued before the crash" });

    const sent = await second.client.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId, message: "after restart" });
    expect(sent.delivery).toBe("started");
    const waited = await second.client.ok<{ status: string; result: string | null }>("t3_thread_wait", { threadId, runId: sent.runId, timeoutMs: 10_000 });
    expect(waited).toMatchObject({ status: "completed", result: "Echo: after restart" });
    const final = await readUntil(second.client, threadId, (r) => r.thread.activeRunId === null);
    expect(final.runs.map((r) => [r.runId, r.status])).toEqual([
      [runId, "interrupted"],
      [queued.runId, "completed"],
      [sent.runId, "completed"],
    ]);
  });
});
