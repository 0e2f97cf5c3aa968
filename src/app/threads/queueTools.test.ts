import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QueueChangeOutput, QueueListOutput, QueueReadOutput } from "../../contracts/tools/queueTools.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";

/**
 * The queue tools against the real server over real MCP: list, read, edit,
 * cancel, reorder and promote-to-steer, their typed failures, idempotent
 * retries with clientRequestId, and the privilege ceiling for a thread caller.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

/** A thread on `provider` whose first turn sleeps, with `messages` queued behind it. */
async function busyWithQueue(provider: "plain" | "scripted", messages: readonly string[], runtimeMode?: string) {
  const thread = await h.createThread({ title: `Busy on ${provider}`, prompt: script({ sleep: 60_000 }), target: { providerInstanceId: provider }, ...(runtimeMode === undefined ? {} : { runtimeMode }) });
  await h.waitForRun(thread.runId!, "running");
  const queued: string[] = [];
  for (const message of messages) {
    const sent = await h.owner.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId: thread.threadId, message, mode: "queue" });
    expect(sent.delivery).toBe("queued");
    queued.push(sent.runId);
  }
  return { threadId: thread.threadId, activeRunId: thread.runId!, queued };
}

function list(threadId: string, client: LoomMcpClient = h.owner): Promise<QueueListOutput> {
  return client.ok<QueueListOutput>("t3_queue_list", { threadId });
}

describe("t3_queue_list and t3_queue_read", () => {
  it("lists the queue next first with previews, and reads one run whole", async () => {
    const long = `long ${"z".repeat(800)}`;
    const { threadId, activeRunId, queued } = await busyWithQueue("plain", ["first", long]);
    const listed = await list(threadId);
    expect(listed).toMatchObject({ threadId, activeRunId, activeRunStatus: "running", steerable: false });
    expect(listed.runs).toEqual([
      expect.objectContaining({ runId: queued[0], position: 0, held: false, kind: "user_turn", text: "first", textLength: 5, truncated: false, createdBy: "user", providerInstanceId: "plain" }),
      expect.objectContaining({ runId: queued[1], position: 1, textLength: long.length, truncated: true }),
    ]);
    expect(listed.runs[1]!.text).toHaveLength(500);
    const read = await h.owner.ok<QueueReadOutput>("t3_queue_read", { threadId, runId: queued[1] });
    expect(read.run).toMatchObject({ runId: queued[1], position: 1, text: long, truncated: false });

    expect(await h.owner.call("t3_queue_read", { threadId, runId: activeRunId })).toMatchObject({ errorCode: "invalid_request" });
    expect(await h.owner.call("t3_queue_read", { threadId, runId: "run:nope" })).toMatchObject({ errorCode: "run_not_found" });
    expect(await h.owner.call("t3_queue_list", { threadId: "thread:nope" })).toMatchObject({ errorCode: "thread_not_found" });
  });
});

describe("t3_queue_edit, t3_queue_reorder and t3_queue_cancel", () => {
  it("edits, reorders and cancels queued runs; retries with the same clientRequestId replay the same change", async () => {
    const { threadId, queued } = await busyWithQueue("plain", ["q1", "q2", "q3"]);
    const [q1, q2, q3] = queued as [string, string, string];

    const edited = await h.owner.ok<QueueChangeOutput>("t3_queue_edit", { threadId, runId: q2, message: "q2 edited", clientRequestId: "edit-q2" });
    expect(edited).toMatchObject({ threadId, runId: q2, runStatus: "queued" });
    expect(edited.queue.map((run) => run.text)).toEqual(["q1", "q2 edited", "q3"]);
    const message = h.items(threadId).find((item) => item.type === "user_message" && item.runId === q2);
    expect(message).toMatchObject({ text: "q2 edited" });
    const sequence = h.state.lastSequence;
    const retried = await h.owner.ok<QueueChangeOutput>("t3_queue_edit", { threadId, runId: q2, message: "q2 edited", clientRequestId: "edit-q2" });
    expect(retried).toMatchObject({ commandId: edited.commandId, sequence: edited.sequence });
    expect(h.state.lastSequence).toBe(sequence);
    expect(await h.owner.call("t3_queue_edit", { threadId, runId: q2, message: "q2 edited" })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("message_unchanged") });

    const reordered = await h.owner.ok<QueueChangeOutput>("t3_queue_reorder", { threadId, runIds: [q3, q1, q2], clientRequestId: "reorder-1" });
    expect(reordered.queue.map((run) => [run.runId, run.position])).toEqual([
      [q3, 0],
      [q1, 1],
      [q2, 2],
    ]);
    expect((await h.owner.ok<QueueChangeOutput>("t3_queue_reorder", { threadId, runIds: [q3, q1, q2], clientRequestId: "reorder-1" })).commandId).toBe(reordered.commandId);
    for (const runIds of [[q3, q1], [q3, q1, q2], [q3, q1, q1]]) {
      expect(await h.owner.call("t3_queue_reorder", { threadId, runIds })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("invalid_reorder") });
    }

    const cancelled = await h.owner.ok<QueueChangeOutput>("t3_queue_cancel", { threadId, runId: q1, clientRequestId: "cancel-q1" });
    expect(cancelled).toMatchObject({ runId: q1, runStatus: "cancelled" });
    expect(cancelled.queue.map((run) => run.runId)).toEqual([q3, q2]);
    expect(h.run(q1)).toMatchObject({ status: "cancelled", endReason: "cancelled", startedAt: null });
    expect((await h.owner.ok<QueueChangeOutput>("t3_queue_cancel", { threadId, runId: q1, clientRequestId: "cancel-q1" })).commandId).toBe(cancelled.commandId);
    expect(await h.owner.call("t3_queue_cancel", { threadId, runId: q1 })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("run_not_queued") });

    const other = await busyWithQueue("plain", ["elsewhere"]);
    const before = h.state.lastSequence;
    expect(await h.owner.call("t3_queue_cancel", { threadId, runId: other.queued[0]! })).toMatchObject({ errorCode: "run_not_found" });
    expect(await h.owner.call("t3_queue_edit", { threadId: "thread:nope", runId: q2, message: "x" })).toMatchObject({ errorCode: "thread_not_found" });
    expect(await h.owner.call("t3_queue_edit", { threadId, runId: other.queued[0]!, message: "x" })).toMatchObject({ errorCode: "run_not_found" });
    expect(await h.owner.call("t3_queue_edit", { threadId, runId: q1, message: "too late" })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("run_not_queued") });
    expect(await h.owner.call("t3_queue_promote_to_steer", { threadId, runId: "run:nope" })).toMatchObject({ errorCode: "run_not_found" });
    expect(await h.owner.call("t3_queue_reorder", { threadId: "thread:nope", runIds: [] })).toMatchObject({ errorCode: "thread_not_found" });
    expect(await h.owner.call("t3_queue_edit", { threadId, runId: q2, message: "" })).toMatchObject({ errorCode: "invalid_request" });
    expect(h.state.lastSequence).toBe(before);
  });
});

describe("t3_queue_promote_to_steer", () => {
  it("moves a queued message into a steerable running turn", async () => {
    const { threadId, activeRunId, queued } = await busyWithQueue("scripted", ["steer me"]);
    expect((await list(threadId)).steerable).toBe(true);
    const promoted = await h.owner.ok<QueueChangeOutput>("t3_queue_promote_to_steer", { threadId, runId: queued[0], clientRequestId: "promote-1" });
    expect(promoted).toMatchObject({ runId: queued[0], runStatus: "cancelled", steeredRunId: activeRunId, queue: [] });
    expect(h.run(queued[0]!).endReason).toBe("promoted_to_steer");
    await h.until(() => h.assistantTexts(threadId, activeRunId).includes("Steered: steer me"), "the steer to reach the turn");
    expect((await h.owner.ok<QueueChangeOutput>("t3_queue_promote_to_steer", { threadId, runId: queued[0], clientRequestId: "promote-1" })).commandId).toBe(promoted.commandId);
  });

  it("answers thread_not_sendable when the running turn cannot be steered", async () => {
    const { threadId, queued } = await busyWithQueue("plain", ["cannot steer"]);
    const before = h.state.lastSequence;
    expect(await h.owner.call("t3_queue_promote_to_steer", { threadId, runId: queued[0]! })).toMatchObject({ errorCode: "thread_not_sendable" });
    expect(h.state.lastSequence).toBe(before);
    expect(h.run(queued[0]!).status).toBe("queued");
  });
});

describe("the privilege ceiling on queue changes", () => {
  async function agentOf(threadId: string, name: string): Promise<LoomMcpClient> {
    const credential = await h.server.credentials.issue({ environmentId: h.server.environmentId, threadId, providerInstanceId: "scripted", providerSessionId: `provider-session:${name}` });
    return h.connect(credential.token, name);
  }

  it("refuses every queue change to a caller without a live run, or to a narrower caller on a broader thread; reads stay open", async () => {
    const target = await busyWithQueue("plain", ["t1", "t2"]);
    const [t1, t2] = target.queued as [string, string];
    const idle = await h.createThread({ title: "Idle caller" });
    const careful = await busyWithQueue("plain", [], "approval-required");
    const idleAgent = await agentOf(idle.threadId, "idle-queue");
    const carefulAgent = await agentOf(careful.threadId, "careful-queue");
    const before = h.state.lastSequence;
    const changes: [string, Record<string, unknown>][] = [
      ["t3_queue_edit", { threadId: target.threadId, runId: t1, message: "hijacked" }],
      ["t3_queue_cancel", { threadId: target.threadId, runId: t1 }],
      ["t3_queue_reorder", { threadId: target.threadId, runIds: [t2, t1] }],
      ["t3_queue_promote_to_steer", { threadId: target.threadId, runId: t1 }],
    ];
    for (const [tool, args] of changes) {
      expect(await idleAgent.call(tool, args), tool).toMatchObject({ errorCode: "parent_not_active" });
      expect(await carefulAgent.call(tool, args), tool).toMatchObject({ errorCode: "runtime_mode_escalation_denied" });
    }
    expect(h.state.lastSequence).toBe(before);
    expect((await list(target.threadId, idleAgent)).runs.map((run) => run.text)).toEqual(["t1", "t2"]);
    expect((await carefulAgent.ok<QueueReadOutput>("t3_queue_read", { threadId: target.threadId, runId: t2 })).run.text).toBe("t2");
  });

  it("lets a thread caller with a live run change a queue no broader than its own", async () => {
    const caller = await busyWithQueue("plain", [], "approval-required");
    const target = await busyWithQueue("plain", ["narrow"], "approval-required");
    const agent = await agentOf(caller.threadId, "narrow-queue");
    const cancelled = await agent.ok<QueueChangeOutput>("t3_queue_cancel", { threadId: target.threadId, runId: target.queued[0]! });
    expect(cancelled).toMatchObject({ runStatus: "cancelled", queue: [] });
  });
});
