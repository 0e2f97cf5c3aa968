import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, systemMessages, waitForResult, VERDICT_SCHEMA as VERDICT } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";
import type { ThreadReadOutput } from "../../contracts/tools/threadTools.js";

/**
 * Structured results on top-level threads: create_threads and
 * t3_thread_launch with an outputSchema, over real MCP with scripted agents.
 * The thread's first work must end with a matching JSON value (one repair
 * turn on mismatch); t3_thread_read reports the outcome, as it does for a
 * delegated child with a schema.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

/** Wait until the thread's structured output is decided; then read it over MCP. */
async function settledRead(threadId: string): Promise<ThreadReadOutput> {
  await h.until(() => {
    const status = h.state.threads.get(threadId)?.structuredOutput?.status;
    return status === "matched" || status === "mismatched";
  }, `structured output of ${threadId}`);
  return h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId });
}

describe("structured results of top-level threads", () => {
  it("t3_thread_launch: a matching answer is the thread's structuredResult", async () => {
    const launched = await h.launch({ message: script({ say: '{"winner": 3, "rationale": "clear"}' }), target: { providerInstanceId: "b" }, outputSchema: VERDICT });
    const read = await settledRead(launched.threadId);
    expect(read.structuredResult).toEqual({ winner: 3, rationale: "clear" });
    expect(read.structuredResultError).toBeNull();
    // The agent was told the schema after its message, and ran once.
    const [message] = h.items(launched.threadId).filter((item) => item.type === "user_message");
    expect(message).toMatchObject({ text: expect.stringContaining('"additionalProperties": false') });
    expect(h.runs(launched.threadId)).toHaveLength(1);
  });

  it("create_threads: a mismatching answer gets one repair turn, then the fixed answer counts", async () => {
    const created = await h.owner.ok<{ threads: { threadId: string }[] }>("create_threads", {
      threads: [
        { prompt: script({ say: '{"winner": "two"}' }, { next: [{ say: '{"winner": 1, "rationale": "fixed"}' }] }), target: { providerInstanceId: "b" }, outputSchema: VERDICT },
        { prompt: script({ say: "plain" }), target: { providerInstanceId: "b" } },
      ],
    });
    const [withSchema, plain] = created.threads;
    const read = await settledRead(withSchema!.threadId);
    expect(read.structuredResult).toEqual({ winner: 1, rationale: "fixed" });
    const repair = systemMessages(h, withSchema!.threadId);
    expect(repair).toHaveLength(1);
    expect(repair[0]!.text).toContain("/winner must be integer");
    expect(h.runs(withSchema!.threadId).map((run) => run.status)).toEqual(["completed", "completed"]);
    // A thread without a schema carries neither field.
    await h.until(() => h.runs(plain!.threadId)[0]?.status === "completed", "plain thread's run");
    const plainRead = await h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId: plain!.threadId });
    expect("structuredResult" in plainRead || "structuredResultError" in plainRead).toBe(false);
    expect(h.state.threads.get(plain!.threadId)?.structuredOutput).toBeUndefined();
  });

  it("reports the errors when the repaired answer is still wrong, and later turns leave the outcome alone", async () => {
    const launched = await h.launch({
      message: script({ say: "not json" }, { next: [{ say: '{"winner": -1, "rationale": "x"}' }] }),
      target: { providerInstanceId: "b" },
      outputSchema: VERDICT,
    });
    const read = await settledRead(launched.threadId);
    expect(read.structuredResult).toBeUndefined();
    expect(read.structuredResultError).toEqual({ message: "the answer and its one repair did not match the output schema", errors: ["/winner must be >= 0"] });
    expect(h.runs(launched.threadId)).toHaveLength(2);
    // A later turn with a matching answer does not change the outcome.
    await h.owner.ok("t3_thread_send", { threadId: launched.threadId, message: script({ say: '{"winner": 1, "rationale": "late"}' }) });
    await h.until(() => h.runs(launched.threadId).length === 3 && h.runs(launched.threadId)[2]!.status === "completed", "the later turn");
    const later = await h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId: launched.threadId });
    expect(later.structuredResultError).toEqual(read.structuredResultError);
    expect(later.structuredResult).toBeUndefined();
  });

  it("each turn while the result is open is given the schema natively (the scripted agent reads it as {{outputSchema}})", async () => {
    const launched = await h.launch({
      message: script({ say: '{"winner": "x"}' }, { next: [{ say: '{"winner": 4, "rationale": "{{outputSchema.required.1}}"}' }] }),
      target: { providerInstanceId: "b" },
      outputSchema: VERDICT,
    });
    const read = await settledRead(launched.threadId);
    // The repair turn saw the schema: its second required property is "rationale".
    expect(read.structuredResult).toEqual({ winner: 4, rationale: "rationale" });
    // Once the result is decided, later turns get no schema.
    await h.owner.ok("t3_thread_send", { threadId: launched.threadId, message: script({ say: "schema={{outputSchema}}" }) });
    await h.until(() => h.runs(launched.threadId)[2]?.status === "completed", "the later turn");
    const texts = h.items(launched.threadId).flatMap((item) => (item.type === "assistant_message" ? [item.text] : []));
    expect(texts[texts.length - 1]).toBe("schema=null");
  });

  it("refuses a schema that does not compile, creating nothing", async () => {
    const before = h.state.threads.size;
    const refused = await h.owner.call("create_threads", {
      threads: [
        { prompt: "fine", target: { providerInstanceId: "b" } },
        { prompt: "bad", target: { providerInstanceId: "b" }, outputSchema: { type: "nonsense-type" } },
      ],
    });
    expect(refused.isError).toBe(true);
    expect(refused.errorCode).toBe("invalid_request");
    expect(refused.errorMessage).toContain("threads[1]: outputSchema is not a usable JSON Schema");
    expect(h.state.threads.size).toBe(before);
  });

  it("t3_thread_read of a delegated child shows its task's structured result", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: '{"winner": 0, "rationale": "only"}' }], { outputSchema: VERDICT, clientRequestId: "child-read" }), { say: "done" }]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId);
    const read = await h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId: task.childThreadId });
    expect(read.structuredResult).toEqual({ winner: 0, rationale: "only" });
    expect(read.structuredResultError).toBeNull();
  });
});
