import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadConfigurationOutput } from "../../contracts/tools/configurationTools.js";
import type { ThreadTransfersOutput } from "../../contracts/tools/lineageTools.js";
import { RESTART_NOTICE } from "../../engine/reconcile.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` in the middle of a handoff: the thread was
 * switched to a provider whose session takes long to open, and its first run
 * there (carrying the handoff) is still starting. After a restart on the same
 * state dir the run is interrupted, the handoff is pending again (nothing read
 * it), and the next run on the target receives it, rebuilt to cover the lost
 * run too; there is still exactly one handoff. Runs against dist/: `npm run
 * build` first.
 */

interface ReadResult {
  runs: { runId: string; ordinal: number; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string }[];
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

/** `slow`'s session open waits `startupDelayMs`: long in the first process, none after the restart. */
function writeConfig(startupDelayMs: number): void {
  const providers = [
    { id: "a", driver: "scripted" },
    { id: "slow", driver: "scripted", options: { startupDelayMs } },
  ];
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers, projects: [{ id: "default", root: dir }] }));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-handoff-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "handoff-crash-test");
  mkdirSync(stateDir);
});
afterAll(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(): Promise<ServedLoom> {
  return rig.start();
}

describe("crash in the middle of a handoff", () => {
  it("gives the handoff back when its run never started, and the next run on the target receives it, once", async () => {
    writeConfig(60_000);
    const first = await serve();
    const thread = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Switching", message: "before the switch", target: { providerInstanceId: "a" } });
    expect(await first.client.ok<{ status: string }>("t3_thread_wait", { threadId: thread.threadId, runId: thread.runId, timeoutMs: 10_000 })).toMatchObject({ status: "completed" });
    const switched = await first.client.ok<ThreadConfigurationOutput>("t3_thread_configure", { threadId: thread.threadId, providerInstanceId: "slow" });
    expect(switched.handoff).toMatchObject({ status: "pending", strategy: "full_thread_summary", coveredRunOrdinals: { from: 1, to: 1 } });
    const lostRun = await first.client.ok<{ runId: string; runStatus: string }>("t3_thread_send", { threadId: thread.threadId, message: "first on slow" });
    expect(lostRun.runStatus).toBe("starting");
    const delivered = await first.client.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId: thread.threadId });
    expect(delivered.handoff).toMatchObject({ status: "ready", deliveredToRunId: lostRun.runId });

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");

    writeConfig(0);
    const second = await serve();
    const read = await second.client.ok<ReadResult>("t3_thread_read", { threadId: thread.threadId, view: "activity", afterPosition: -1 });
    expect(read.runs.find((run) => run.runId === lostRun.runId)).toMatchObject({ status: "interrupted", endReason: "server_restarted" });
    expect(read.items.filter((item) => item.type === "system_notice")).toEqual([expect.objectContaining({ runId: lostRun.runId, text: RESTART_NOTICE })]);
    const givenBack = await second.client.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId: thread.threadId });
    expect(givenBack).toMatchObject({ providerInstanceId: "slow", handoff: { handoffId: delivered.handoff!.handoffId, status: "pending", deliveredToRunId: null, bytes: null } });

    const next = await second.client.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: script({ say: "{{context}}" }) });
    const waited = await second.client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: thread.threadId, runId: next.runId, timeoutMs: 10_000 });
    expect(waited.status).toBe("completed");
    expect(waited.result).toMatch(/^<loom_context>\n<handoff [^>]*strategy="full_thread_summary"[^>]* from="a" to="slow" runs="1-2">/);
    expect(waited.result).toContain("<user>before the switch</user>\n<assistant>Echo: before the switch</assistant>");
    expect(waited.result).toContain('<run ordinal="2" kind="user_turn" status="interrupted">\n<user>first on slow</user>');
    const final = await second.client.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId: thread.threadId });
    expect(final.handoff).toMatchObject({ handoffId: delivered.handoff!.handoffId, status: "ready", deliveredToRunId: next.runId, coveredRunOrdinals: { from: 1, to: 2 } });
    const listed = await second.client.ok<ThreadTransfersOutput>("t3_thread_transfers", { threadId: thread.threadId });
    expect(listed.transfers.map((t) => [t.kind, t.status, t.deliveredRunId])).toEqual([["handoff", "ready", next.runId]]);
  });
});
