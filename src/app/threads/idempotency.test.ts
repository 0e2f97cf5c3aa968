import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * Idempotent retries by clientRequestId, and invalid arguments that must be
 * refused with a typed failure while writing nothing (spec 000, Policy And
 * Idempotency).
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

interface Created {
  threads: { threadId: string; runId: string | null }[];
}
interface Sent {
  messageId: string;
  runId: string;
  commandId: string;
  sequence: number;
}

describe("clientRequestId retries", () => {
  it("create_threads returns the same threads and creates them once", async () => {
    const before = h.state.threads.size;
    const args = { clientRequestId: "batch-1", threads: [{ title: "Retry A", prompt: "hello" }, { title: "Retry B" }] };
    const first = await h.owner.ok<Created>("create_threads", args);
    const second = await h.owner.ok<Created>("create_threads", args);
    const ids = (result: Created) => result.threads.map((t) => [t.threadId, t.runId]);
    expect(ids(second)).toEqual(ids(first));
    expect(h.state.threads.size).toBe(before + 2);
    const [a, b] = first.threads;
    expect(a!.runId).not.toBeNull();
    expect(b!.runId).toBeNull();
    await h.waitForEnd(a!.runId!);
    expect(h.runs(a!.threadId)).toHaveLength(1);
    expect(h.items(a!.threadId).filter((item) => item.type === "user_message")).toHaveLength(1);

    const other = await h.owner.ok<Created>("create_threads", { ...args, clientRequestId: "batch-2" });
    expect(other.threads[0]!.threadId).not.toBe(a!.threadId);
    expect(h.state.threads.size).toBe(before + 4);
  });

  it("t3_thread_send returns the same message and run, and starts one run", async () => {
    const { threadId } = await h.createThread({ title: "Send twice" });
    const args = { threadId, message: script({ sleep: 50 }, { say: "once" }), clientRequestId: "send-1" };
    const first = await h.owner.ok<Sent>("t3_thread_send", args);
    const second = await h.owner.ok<Sent>("t3_thread_send", args);
    expect(second).toMatchObject({ messageId: first.messageId, runId: first.runId, commandId: first.commandId, sequence: first.sequence });
    await h.waitForEnd(first.runId);
    const third = await h.owner.ok<Sent>("t3_thread_send", args);
    expect(third).toMatchObject({ messageId: first.messageId, runId: first.runId });
    expect(h.runs(threadId).map((run) => run.id)).toEqual([first.runId]);
    expect(h.assistantTexts(threadId)).toEqual(["once"]);

    const fresh = await h.owner.ok<Sent>("t3_thread_send", { ...args, clientRequestId: "send-2" });
    expect(fresh.runId).not.toBe(first.runId);
    await h.waitForEnd(fresh.runId);
    expect(h.runs(threadId)).toHaveLength(2);
  });

  it("an agent's retried create_threads lands on the same thread", async () => {
    const parent = await h.createThread({
      title: "Retrying agent",
      prompt: script(
        { call: "create_threads", args: { clientRequestId: "mine", threads: [{ title: "Agent child" }] }, as: "a" },
        { call: "create_threads", args: { clientRequestId: "mine", threads: [{ title: "Agent child" }] }, as: "b" },
        { say: "{{a.threads.0.threadId}} {{b.threads.0.threadId}}" },
      ),
    });
    expect((await h.waitForEnd(parent.runId!)).status).toBe("completed");
    const children = [...h.state.threads.values()].filter((t) => t.title === "Agent child");
    expect(children).toHaveLength(1);
    expect(h.assistantTexts(parent.threadId)).toEqual([`${children[0]!.id} ${children[0]!.id}`]);
  });

  it("t3_thread_update replays the first rename for a reused key", async () => {
    const { threadId } = await h.createThread({ title: "Named" });
    const args = { threadId, action: "rename", title: "One", clientRequestId: "r" };
    const first = await h.owner.ok<{ title: string; sequence: number }>("t3_thread_update", args);
    const again = await h.owner.ok<{ title: string; sequence: number }>("t3_thread_update", args);
    expect(first.title).toBe("One");
    expect(again).toMatchObject({ title: "One", sequence: first.sequence });
  });
});

describe("invalid arguments", () => {
  it("are refused with typed failures and write nothing", async () => {
    const { threadId } = await h.createThread({ title: "Existing" });
    const before = h.state.lastSequence;
    const threads = h.state.threads.size;
    const missing = "thread:does-not-exist";
    const cases: [string, Record<string, unknown>, string][] = [
      ["create_threads", { threads: [] }, "invalid_request"],
      ["create_threads", { threads: Array.from({ length: 21 }, (_, i) => ({ title: `t${i}` })) }, "invalid_request"],
      ["create_threads", { threads: [{ title: "x", colour: "blue" }] }, "invalid_request"],
      ["create_threads", { threads: [{ title: "good" }, { title: "bad model", target: { model: "gpt-9" } }] }, "model_unavailable"],
      ["create_threads", { threads: [{ title: "bad provider", target: { providerInstanceId: "nope" } }] }, "provider_unavailable"],
      ["create_threads", { threads: [{ title: "bad driver", target: { driverKind: "codex" } }] }, "provider_unavailable"],
      ["t3_thread_launch", { message: "hi", projectId: "nope" }, "invalid_request"],
      ["t3_thread_launch", { message: "hi", workspaceStrategy: "existing_worktree", worktreePath: "/definitely/not/here" }, "invalid_request"],
      ["t3_thread_read", { threadId, beforePosition: 1, afterPosition: 0 }, "invalid_request"],
      ["t3_thread_read", { threadId: missing }, "thread_not_found"],
      ["t3_thread_update", { threadId, action: "rename" }, "invalid_request"],
      ["t3_thread_update", { threadId, action: "regenerate_title", title: "no" }, "invalid_request"],
      ["t3_thread_update", { threadId: missing, action: "rename", title: "x" }, "thread_not_found"],
      ["t3_thread_send", { threadId, message: "" }, "invalid_request"],
      ["t3_thread_send", { threadId, message: "hi", mode: "shout" }, "invalid_request"],
      ["t3_thread_send", { threadId: missing, message: "hi" }, "thread_not_found"],
      ["t3_thread_wait", { threadId: missing }, "thread_not_found"],
      ["t3_thread_wait", { threadId, runId: "run:nope" }, "run_not_found"],
      ["t3_thread_interrupt", { threadId: missing }, "thread_not_found"],
      ["t3_thread_list", { limit: 0 }, "invalid_request"],
      ["no_such_tool", {}, "invalid_request"],
    ];
    for (const [tool, args, code] of cases) {
      const outcome = await h.owner.call(tool, args);
      expect({ tool, args, isError: outcome.isError, code: outcome.errorCode }).toEqual({ tool, args, isError: true, code });
    }
    expect(h.state.lastSequence).toBe(before);
    expect(h.state.threads.size).toBe(threads);
    expect(h.state.threads.get(threadId)!.title).toBe("Existing");
  });
});
