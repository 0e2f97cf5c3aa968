import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, delegateStep, launchParent, tasksOf, waitForResult } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * t3_thread_send details of spec 000 over the real server: restart on a
 * provider that can stop a turn but not restart it lets an unheld delegated
 * result run first; /compact and /logout neither steer nor restart.
 */

let h: LoomHarness;
beforeAll(async () => {
  // `stopper` can stop a turn but neither steer nor restart one with new input.
  h = await LoomHarness.start({
    config: {
      providers: [
        ...DELEGATION_PROVIDERS,
        { id: "stopper", driver: "scripted", options: { capabilities: { steering: false, restart: false } } },
        { id: "slowturn", driver: "scripted", options: { turnDelayMs: 60_000 } },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

describe("restart", () => {
  it("on a provider that cannot restart, the message runs after an unheld delegated result and before other queued messages", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "the result" }]), { sleep: 60_000 }], "stopper");
    const [task] = await h.until(() => (tasksOf(h, parent.threadId).length === 1 ? tasksOf(h, parent.threadId) : null), "the task");
    await waitForResult(h, task!.taskId);
    const noticeRun = await h.until(() => h.state.tasks.get(task!.taskId)!.notices[0]?.runId, "the queued notice");
    const queued = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: parent.threadId, message: "queued later", mode: "queue" });
    const restarted = await h.owner.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId: parent.threadId, message: script({ say: "restarted" }), mode: "restart" });
    expect(restarted.delivery).toBe("restarted");
    expect(h.run(parent.runId).interruptRequestedAt).not.toBeNull();
    // Once the interrupted turn ends they run one after the other: the result, the restart, the queued message.
    await h.waitForEnd(queued.runId);
    expect(h.run(parent.runId).status).toBe("interrupted");
    // Timeline positions only grow: the order of the runs' replies is the order they ran in.
    const replied = h.items(parent.threadId).flatMap((item) => (item.type === "assistant_message" && item.runId !== parent.runId ? [item.runId] : []));
    expect(replied).toEqual([noticeRun, restarted.runId, queued.runId]);
    expect(h.assistantTexts(parent.threadId, restarted.runId)).toEqual(["restarted"]);
  });
});

describe("/compact and /logout", () => {
  it("neither restart nor steer a turn, nor are steered into one: thread_not_sendable; queued they are accepted", async () => {
    const busy = await h.createThread({ prompt: script({ sleep: 60_000 }), target: { providerInstanceId: "a" } });
    await h.waitForRun(busy.runId!, "running");
    for (const [message, mode] of [
      ["/compact", "restart"],
      ["/logout", "restart"],
      ["/compact focus on tests", "steer"],
    ] as const) {
      const refused = await h.owner.call("t3_thread_send", { threadId: busy.threadId, message, mode });
      expect([message, mode, refused.errorCode]).toEqual([message, mode, "thread_not_sendable"]);
      expect(refused.errorMessage).toMatch(/provider control command/);
    }
    const queued = await h.owner.ok<{ delivery: string }>("t3_thread_send", { threadId: busy.threadId, message: "/compact" });
    expect(queued.delivery).toBe("queued");
    await h.owner.ok("t3_thread_interrupt", { threadId: busy.threadId });

    // A turn that is itself /compact (this provider takes a minute to start a turn) can neither be restarted nor steered.
    const compacting = await h.createThread({ target: { providerInstanceId: "slowturn" } });
    const first = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: compacting.threadId, message: "/compact" });
    await h.waitForRun(first.runId, "running");
    expect((await h.owner.call("t3_thread_send", { threadId: compacting.threadId, message: "go on", mode: "restart" })).errorCode).toBe("thread_not_sendable");
    expect((await h.owner.call("t3_thread_send", { threadId: compacting.threadId, message: "go on", mode: "steer" })).errorCode).toBe("thread_not_sendable");
    expect(await h.owner.ok("t3_thread_send", { threadId: compacting.threadId, message: "go on" })).toMatchObject({ delivery: "queued" });
    await h.owner.ok("t3_thread_interrupt", { threadId: compacting.threadId });
  });
});

describe("thread.created.record", () => {
  it("an agent's create_threads leaves a thread_created item per new thread on its timeline", async () => {
    const creator = await h.createThread({
      title: "Creator",
      target: { providerInstanceId: "a" },
      prompt: script({ call: "create_threads", args: { threads: [{ title: "Left" }, { title: "Right" }] }, as: "c" }, { say: "made {{c.threads.0.threadId}}" }),
    });
    await h.waitForEnd(creator.runId!);
    const created = h.items(creator.threadId).filter((item) => item.type === "thread_created");
    expect(created.map((item) => item.type === "thread_created" && [item.title, item.relation, item.runId])).toEqual([
      ["Left", "root", creator.runId],
      ["Right", "root", creator.runId],
    ]);
  });

  it("the owner may record one through the HTTP API, once", async () => {
    const a = await h.createThread({ title: "A" });
    const b = await h.createThread({ title: "B" });
    expect((await h.dispatch("thread.created.record", { threadId: a.threadId, childThreadId: b.threadId })).status).toBe(200);
    expect(h.items(a.threadId).filter((item) => item.type === "thread_created")).toHaveLength(1);
    expect(await h.dispatch("thread.created.record", { threadId: a.threadId, childThreadId: b.threadId })).toMatchObject({
      status: 409,
      body: { rejection: { code: "thread_created_already_recorded" } },
    });
  });
});
