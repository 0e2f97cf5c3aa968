import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadOrganizeOutput } from "../../contracts/tools/organizeTools.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";

/**
 * t3_thread_organize against the real server over real MCP: every action,
 * its typed failures, idempotent retries, and the privilege ceiling.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

const HOUR_LATER = () => new Date(Date.now() + 3_600_000).toISOString();

function organize(args: Record<string, unknown>, client: LoomMcpClient = h.owner): Promise<ThreadOrganizeOutput> {
  return client.ok<ThreadOrganizeOutput>("t3_thread_organize", args);
}

async function agentOf(threadId: string, name: string): Promise<LoomMcpClient> {
  const credential = await h.server.credentials.issue({ environmentId: h.server.environmentId, threadId, providerInstanceId: "scripted", providerSessionId: `provider-session:${name}` });
  return h.connect(credential.token, name);
}

describe("t3_thread_organize actions", () => {
  it("pins, reorders pins, unpins, archives and unarchives", async () => {
    const a = await h.createThread({ title: "A" });
    const b = await h.createThread({ title: "B" });
    const pinnedA = await organize({ threadId: a.threadId, action: "pin" });
    expect(pinnedA).toMatchObject({ action: "pin", thread: { threadId: a.threadId, pinned: true, pinnedRank: 0 }, pinnedOrder: [a.threadId] });
    expect((await organize({ threadId: b.threadId, action: "pin" })).pinnedOrder).toEqual([a.threadId, b.threadId]);
    const reordered = await organize({ action: "reorder_pins", threadIds: [b.threadId, a.threadId] });
    expect(reordered).toMatchObject({ thread: null, pinnedOrder: [b.threadId, a.threadId] });
    expect(await organize({ threadId: b.threadId, action: "unpin" })).toMatchObject({ thread: { pinned: false, pinnedRank: null }, pinnedOrder: [a.threadId] });
    expect(await organize({ threadId: a.threadId, action: "archive" })).toMatchObject({ thread: { archived: true, pinned: false }, pinnedOrder: [] });
    expect(h.state.threads.get(a.threadId)!.archivedAt).not.toBeNull();
    expect(await organize({ threadId: a.threadId, action: "unarchive" })).toMatchObject({ thread: { archived: false } });
  });

  it("deletes a thread with every thread under it and names each; a thread cannot delete itself or a thread above it", async () => {
    const parent = await h.createThread({ title: "Doomed parent", prompt: script({ say: "done" }) });
    await h.waitForRun(parent.runId!, "completed");
    const child = await h.owner.ok<{ threadId: string }>("t3_thread_fork", { threadId: parent.threadId, title: "Doomed child" });
    const grandchild = await h.owner.ok<{ threadId: string }>("t3_thread_fork", { threadId: child.threadId, title: "Doomed grandchild" });
    const bystander = await h.createThread({ title: "Bystander" });
    const busy = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_fork", { threadId: child.threadId, title: "Busy grandchild", message: script({ sleep: 60_000 }) });
    await h.waitForRun(busy.runId, "running");
    const busyAgent = await agentOf(busy.threadId, "busy-deleter");
    const before = h.state.lastSequence;
    expect(await busyAgent.call("t3_thread_organize", { threadId: busy.threadId, action: "delete" })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("cannot delete itself") });
    expect(await busyAgent.call("t3_thread_organize", { threadId: parent.threadId, action: "delete" })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("a thread above it") });
    expect(await busyAgent.call("t3_thread_organize", { action: "delete" })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("delete needs `threadId`") });
    expect(h.state.lastSequence).toBe(before);
    const deleted = await organize({ threadId: parent.threadId, action: "delete" });
    expect(deleted).toMatchObject({ action: "delete", thread: { threadId: parent.threadId, deleted: true } });
    expect(new Set(deleted.affectedThreadIds)).toEqual(new Set([parent.threadId, child.threadId, grandchild.threadId, busy.threadId]));
    for (const id of deleted.affectedThreadIds) expect(h.state.threads.get(id)!.deletedAt).not.toBeNull();
    expect(h.state.threads.get(bystander.threadId)!.deletedAt).toBeNull();
    expect(await h.owner.call("t3_thread_organize", { threadId: child.threadId, action: "delete" })).toMatchObject({ errorCode: "thread_not_found" });
  });

  it("settles and unsettles, marks unread, sets auto-settle, snoozes and unsnoozes", async () => {
    const t = await h.createThread({ title: "Attention" });
    expect(await organize({ threadId: t.threadId, action: "settle" })).toMatchObject({ thread: { settled: true } });
    expect(await organize({ threadId: t.threadId, action: "unsettle" })).toMatchObject({ thread: { settled: false } });
    expect(await organize({ threadId: t.threadId, action: "mark_unread" })).toMatchObject({ thread: { unread: true } });
    expect(await organize({ threadId: t.threadId, action: "auto_settle", enabled: false })).toMatchObject({ thread: { autoSettle: false } });
    const until = HOUR_LATER();
    expect(await organize({ threadId: t.threadId, action: "snooze", until })).toMatchObject({ thread: { snoozed: true, snoozedUntil: until } });
    expect(await organize({ threadId: t.threadId, action: "unsnooze" })).toMatchObject({ thread: { snoozed: false, snoozedUntil: null } });
  });
});

describe("t3_thread_organize failures and retries", () => {
  it("answers a typed failure for a change that changes nothing, a missing or misplaced field, a bad time and an unknown thread, writing nothing", async () => {
    const t = await h.createThread({ title: "Strict" });
    await organize({ threadId: t.threadId, action: "pin" });
    const before = h.state.lastSequence;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ threadId: t.threadId, action: "pin" }, "invalid_request", "thread_already_pinned"],
      [{ threadId: t.threadId, action: "unsettle" }, "invalid_request", "thread_not_settled"],
      [{ threadId: t.threadId, action: "snooze" }, "invalid_request", "needs `until`"],
      [{ threadId: t.threadId, action: "snooze", until: "2001-01-01T00:00:00Z" }, "invalid_request", "invalid_snooze_time"],
      [{ threadId: t.threadId, action: "snooze", until: "tomorrow" }, "invalid_request", "until"],
      [{ threadId: t.threadId, action: "pin", until: HOUR_LATER() }, "invalid_request", "only for the snooze action"],
      [{ threadId: t.threadId, action: "auto_settle" }, "invalid_request", "needs `enabled`"],
      [{ action: "reorder_pins" }, "invalid_request", "needs `threadIds`"],
      [{ action: "reorder_pins", threadIds: ["thread:nope"] }, "thread_not_found", "thread:nope"],
      [{ threadId: "thread:nope", action: "archive" }, "thread_not_found", "thread:nope"],
      [{ action: "archive" }, "invalid_request", "threadId is required"],
    ];
    for (const [args, code, message] of cases) {
      expect(await h.owner.call("t3_thread_organize", args), JSON.stringify(args)).toMatchObject({ errorCode: code, errorMessage: expect.stringContaining(message) });
    }
    // A refused command leaves a receipt, never an event.
    expect(h.state.lastSequence).toBe(before);
  });

  it("replays the same change for a retry with the same clientRequestId", async () => {
    const t = await h.createThread({ title: "Retry" });
    const first = await organize({ threadId: t.threadId, action: "archive", clientRequestId: "archive-once" });
    const sequence = h.state.lastSequence;
    const again = await organize({ threadId: t.threadId, action: "archive", clientRequestId: "archive-once" });
    expect(again).toMatchObject({ commandId: first.commandId, sequence: first.sequence, thread: { archived: true } });
    expect(h.state.lastSequence).toBe(sequence);
    expect(await h.owner.call("t3_thread_organize", { threadId: t.threadId, action: "archive" })).toMatchObject({ errorCode: "invalid_request" });
  });
});

describe("the privilege ceiling on t3_thread_organize", () => {
  it("lets a thread organize itself during a run, but nothing without a live run and no broader thread", async () => {
    const target = await h.createThread({ title: "Target" });
    const idle = await h.createThread({ title: "Idle organizer" });
    const careful = await h.createThread({ title: "Careful organizer", prompt: script({ sleep: 60_000 }), runtimeMode: "approval-required" });
    await h.waitForRun(careful.runId!, "running");
    const idleAgent = await agentOf(idle.threadId, "idle-organizer");
    const carefulAgent = await agentOf(careful.threadId, "careful-organizer");
    const before = h.state.lastSequence;
    for (const args of [
      { threadId: target.threadId, action: "pin" },
      { threadId: target.threadId, action: "snooze", until: HOUR_LATER() },
      { action: "reorder_pins", threadIds: [target.threadId] },
    ]) {
      expect(await idleAgent.call("t3_thread_organize", args)).toMatchObject({ errorCode: "parent_not_active" });
      expect(await carefulAgent.call("t3_thread_organize", args)).toMatchObject({ errorCode: "runtime_mode_escalation_denied" });
    }
    // Organizing is a write: not even its own thread between runs; during a run it may.
    expect(await idleAgent.call("t3_thread_organize", { action: "mark_unread" })).toMatchObject({ errorCode: "parent_not_active" });
    expect(h.state.lastSequence).toBe(before);
    expect(await organize({ action: "mark_unread" }, carefulAgent)).toMatchObject({ thread: { threadId: careful.threadId, unread: true } });
  });
});
