import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadConfigurationOutput, ThreadConfigureOutput } from "../../contracts/tools/configurationTools.js";
import { runInput } from "../../engine/runInput.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";

/**
 * t3_thread_configuration and t3_thread_configure against the real server:
 * modes and models, a provider switch between two scripted instances whose
 * first turn input carries the handoff, the handoff strategies, typed
 * failures, idempotent retries and the privilege ceiling.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "a", driver: "scripted" },
        { id: "b", driver: "scripted", models: ["b-1", "b-2"] },
        { id: "narrow", driver: "scripted", options: { runtimeModes: ["approval-required"] } },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

function configure(args: Record<string, unknown>, client: LoomMcpClient = h.owner): Promise<ThreadConfigureOutput> {
  return client.ok<ThreadConfigureOutput>("t3_thread_configure", args);
}

/** A thread on `a` that already ran the echo turns `messages`, one run each. */
async function threadWithRuns(messages: readonly string[], extra: Record<string, unknown> = {}) {
  const thread = await h.createThread({ title: "Switcher", target: { providerInstanceId: "a" }, ...extra });
  for (const message of messages) {
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message });
    expect((await h.waitForEnd(sent.runId)).status).toBe("completed");
  }
  return thread.threadId;
}

async function send(threadId: string, message: string): Promise<string> {
  const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message });
  expect((await h.waitForEnd(sent.runId)).status).toBe("completed");
  return sent.runId;
}

describe("t3_thread_configuration", () => {
  it("reads the modes, model, provider offer and newest handoff", async () => {
    const threadId = await threadWithRuns([]);
    const read = await h.owner.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId });
    expect(read).toEqual({
      threadId,
      providerInstanceId: "a",
      driver: "scripted",
      model: "scripted-1",
      runtimeMode: "full-access",
      interactionMode: "default",
      provider: { available: true, reason: null, models: ["scripted-1"], runtimeModes: ["approval-required", "auto-accept-edits", "full-access"], steering: true, interrupt: true, fork: false },
      activeRunProviderInstanceId: null,
      handoff: null,
    });
    expect(await h.owner.call("t3_thread_configuration", {})).toMatchObject({ errorCode: "invalid_request" });
    expect(await h.owner.call("t3_thread_configuration", { threadId: "thread:nope" })).toMatchObject({ errorCode: "thread_not_found" });
  });
});

describe("a provider switch", () => {
  it("sends the next run to the new provider with a full_thread_summary handoff in its first turn input", async () => {
    const threadId = await threadWithRuns(["first question", "second question"]);
    const switched = await configure({ threadId, providerInstanceId: "b" });
    expect(switched).toMatchObject({
      providerInstanceId: "b",
      model: "b-1",
      changed: ["provider"],
      handoff: { strategy: "full_thread_summary", status: "pending", fromProvider: "a", toProvider: "b", coveredRunOrdinals: { from: 1, to: 2 }, bytes: null, deliveredToRunId: null },
    });
    expect(h.items(threadId).filter((item) => item.type === "handoff")).toEqual([expect.objectContaining({ status: "pending", fromProvider: "a", toProvider: "b" })]);

    const runId = await send(threadId, script({ say: "{{context}}" }));
    const run = h.run(runId);
    expect(run).toMatchObject({ providerInstanceId: "b", modelSelection: { providerInstanceId: "b", model: "b-1" } });
    // The target's first turn input carries the handoff, as the driver received it.
    const [said] = h.assistantTexts(threadId, runId);
    expect(said).toMatch(/^<loom_context>\n<handoff id="context-handoff:[^"]+" strategy="full_thread_summary" thread="[^"]+" from="a" to="b" runs="1-2">/);
    expect(said).toContain("<user>first question</user>\n<assistant>Echo: first question</assistant>");
    expect(said).toContain("<user>second question</user>");
    expect(said).not.toContain("{{context}}");
    expect(runInput(h.state, h.server.orchestrator.timeline, run).startsWith(said!)).toBe(true);
    const after = await h.owner.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId });
    expect(after.handoff).toMatchObject({ status: "ready", deliveredToRunId: runId, coveredRunOrdinals: { from: 1, to: 2 } });
    expect(after.handoff!.bytes).toBe(Buffer.byteLength(said!.slice("<loom_context>\n".length, said!.lastIndexOf("\n</loom_context>"))));
    expect(h.items(threadId).find((item) => item.type === "handoff")).toMatchObject({ status: "ready" });

    // Only the first run on the target gets it.
    const next = await send(threadId, "plain follow-up");
    expect(h.assistantTexts(threadId, next)).toEqual(["Echo: plain follow-up"]);

    // Back to a, which saw runs 1-2: a delta of the runs since.
    const back = await configure({ threadId, providerInstanceId: "a" });
    expect(back.handoff).toMatchObject({ strategy: "delta_since_target_last_seen", coveredRunOrdinals: { from: 3, to: 4 } });
    const onA = await send(threadId, "back on a");
    const [echo] = h.assistantTexts(threadId, onA);
    expect(echo).toMatch(/^Echo: <loom_context>\n<handoff [^>]*strategy="delta_since_target_last_seen"[^>]* runs="3-4">/);
    expect(echo).toContain("<user>plain follow-up</user>");
    expect(echo).not.toContain('<run ordinal="1"');
    expect(echo).not.toContain("<user>first question</user>");
    expect(echo!.endsWith("</loom_context>\n\nback on a")).toBe(true);
  });

  it("lets an active run finish where it is, re-targets queued runs, and hands over nothing when the target saw everything", async () => {
    const thread = await h.createThread({ title: "Busy switcher", target: { providerInstanceId: "a" }, prompt: script({ sleep: 60_000 }) });
    await h.waitForRun(thread.runId!, "running");
    const queued = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: "queued on a", mode: "queue" });
    const switched = await configure({ threadId: thread.threadId, providerInstanceId: "b", model: "b-2" });
    expect(switched).toMatchObject({ providerInstanceId: "b", model: "b-2", activeRunProviderInstanceId: "a", handoff: { status: "pending", coveredRunOrdinals: { from: 1, to: 1 } } });
    expect(h.run(thread.runId!).providerInstanceId).toBe("a");
    expect(h.run(queued.runId)).toMatchObject({ status: "queued", providerInstanceId: "b", modelSelection: { providerInstanceId: "b", model: "b-2" } });
    await h.owner.ok("t3_thread_interrupt", { threadId: thread.threadId });
    expect((await h.waitForEnd(queued.runId)).status).toBe("completed");
    expect(h.assistantTexts(thread.threadId, queued.runId)[0]).toMatch(/^Echo: <loom_context>\n<handoff [^>]* runs="1">[\s\S]*<run ordinal="1" kind="user_turn" status="interrupted">/);

    // Switching to a and straight back before any run: b saw everything, so nothing is handed over and a's pending handoff is superseded.
    const toA = await configure({ threadId: thread.threadId, providerInstanceId: "a" });
    expect(toA.handoff).toMatchObject({ toProvider: "a", status: "pending" });
    const toB = await configure({ threadId: thread.threadId, providerInstanceId: "b" });
    expect(toB.handoff).toMatchObject({ toProvider: "a", status: "superseded" });
    const quiet = await send(thread.threadId, "no context");
    expect(h.assistantTexts(thread.threadId, quiet)).toEqual(["Echo: no context"]);
  });
});

describe("t3_thread_configure of modes and models", () => {
  it("changes the model and modes, skips what already holds, and replays the same answer for a retry", async () => {
    const threadId = await threadWithRuns([], { target: { providerInstanceId: "b" } });
    const changed = await configure({ threadId, model: "b-2", runtimeMode: "auto-accept-edits", interactionMode: "plan", clientRequestId: "cfg-1" });
    expect(changed).toMatchObject({ model: "b-2", runtimeMode: "auto-accept-edits", interactionMode: "plan", changed: ["runtimeMode", "interactionMode", "model"] });
    expect(changed.commandIds).toHaveLength(3);
    const sequence = h.state.lastSequence;
    const retried = await configure({ threadId, model: "b-2", runtimeMode: "auto-accept-edits", interactionMode: "plan", clientRequestId: "cfg-1" });
    expect(retried).toMatchObject({ changed: changed.changed, commandIds: changed.commandIds, sequence: changed.sequence });
    expect(h.state.lastSequence).toBe(sequence);
    const same = await configure({ threadId, model: "b-2", interactionMode: "plan" });
    expect(same).toMatchObject({ changed: [], commandIds: [], sequence: null });
    expect(h.state.lastSequence).toBe(sequence);
    // The same provider with another model is a model change, not a switch.
    expect(await configure({ threadId, providerInstanceId: "b", model: "b-1" })).toMatchObject({ changed: ["model"], model: "b-1", handoff: null });
  });

  it("steps an inherited runtime mode down to what the new provider offers", async () => {
    const threadId = await threadWithRuns(["hello"]);
    const moved = await configure({ threadId, providerInstanceId: "narrow" });
    expect(moved).toMatchObject({ providerInstanceId: "narrow", runtimeMode: "approval-required", changed: ["runtimeMode", "provider"] });
  });
});

describe("t3_thread_configure failures", () => {
  async function agentOf(threadId: string, name: string): Promise<LoomMcpClient> {
    const credential = await h.server.credentials.issue({ environmentId: h.server.environmentId, threadId, providerInstanceId: "a", providerSessionId: `provider-session:${name}` });
    return h.connect(credential.token, name);
  }

  it("refuses bad changes with typed failures and changes nothing", async () => {
    const threadId = await threadWithRuns(["keep me"]);
    const before = h.state.lastSequence;
    const cases: [Record<string, unknown>, string][] = [
      [{ threadId }, "invalid_request"],
      [{ threadId, providerInstanceId: "missing" }, "provider_unavailable"],
      [{ threadId, providerInstanceId: "b", model: "b-9" }, "model_unavailable"],
      [{ threadId, model: "b-1" }, "model_unavailable"],
      [{ threadId, providerInstanceId: "narrow", runtimeMode: "full-access" }, "invalid_request"],
      [{ threadId: "thread:nope", runtimeMode: "full-access" }, "thread_not_found"],
      [{ threadId, runtimeMode: "root" }, "invalid_request"],
    ];
    for (const [args, code] of cases) expect(await h.owner.call("t3_thread_configure", args), JSON.stringify(args)).toMatchObject({ errorCode: code });
    expect(h.state.lastSequence).toBe(before);
    expect(h.state.threads.get(threadId)).toMatchObject({ providerInstanceId: "a", runtimeMode: "full-access" });
  });

  it("holds the privilege ceiling: an agent may narrow its own thread, never widen it, and needs a live run for another", async () => {
    const careful = await h.createThread({ title: "Careful", target: { providerInstanceId: "a" }, runtimeMode: "auto-accept-edits", interactionMode: "plan", prompt: script({ sleep: 60_000 }) });
    await h.waitForRun(careful.runId!, "running");
    const wide = await threadWithRuns([]);
    const idle = await threadWithRuns([]);
    const carefulAgent = await agentOf(careful.threadId, "careful-configure");
    const idleAgent = await agentOf(idle, "idle-configure");
    const before = h.state.lastSequence;
    expect(await carefulAgent.call("t3_thread_configure", { runtimeMode: "full-access" })).toMatchObject({ errorCode: "runtime_mode_escalation_denied" });
    expect(await carefulAgent.call("t3_thread_configure", { interactionMode: "default" })).toMatchObject({ errorCode: "interaction_mode_escalation_denied" });
    expect(await carefulAgent.call("t3_thread_configure", { threadId: wide, providerInstanceId: "b" })).toMatchObject({ errorCode: "runtime_mode_escalation_denied" });
    expect(await idleAgent.call("t3_thread_configure", { threadId: careful.threadId, runtimeMode: "approval-required" })).toMatchObject({ errorCode: "parent_not_active" });
    expect(h.state.lastSequence).toBe(before);
    expect(await carefulAgent.ok<ThreadConfigureOutput>("t3_thread_configure", { runtimeMode: "approval-required" })).toMatchObject({ threadId: careful.threadId, runtimeMode: "approval-required", changed: ["runtimeMode"] });
    expect(await idleAgent.ok<ThreadConfigurationOutput>("t3_thread_configuration", { threadId: careful.threadId })).toMatchObject({ runtimeMode: "approval-required" });
  });
});
