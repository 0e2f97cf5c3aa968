import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadForkOutput, ThreadMergeBackOutput, ThreadTransfersOutput } from "../../contracts/tools/lineageTools.js";
import type { ThreadConfigureOutput } from "../../contracts/tools/configurationTools.js";
import { HANDOFF_BYTE_CAP } from "../../core/lineage/transcript.js";
import { childScript } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";

/**
 * t3_thread_fork, t3_thread_merge_back, t3_thread_transfers and
 * delegate_task relation fork against the real server over real MCP, between
 * two scripted instances: the fork's first turn input carries the source's
 * transcript; merge backs reach the source's next run; the 64,000-byte cap.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "a", driver: "scripted" },
        { id: "b", driver: "scripted", models: ["b-1", "b-2"] },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

async function send(threadId: string, message: string): Promise<string> {
  const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message });
  expect((await h.waitForEnd(sent.runId)).status).toBe("completed");
  return sent.runId;
}

async function threadWithRuns(messages: readonly string[], extra: Record<string, unknown> = {}): Promise<string> {
  const thread = await h.createThread({ title: "Source", target: { providerInstanceId: "a" }, ...extra });
  for (const message of messages) await send(thread.threadId, message);
  return thread.threadId;
}

async function agentOf(threadId: string, name: string): Promise<LoomMcpClient> {
  const credential = await h.server.credentials.issue({ environmentId: h.server.environmentId, threadId, providerInstanceId: "a", providerSessionId: `provider-session:${name}` });
  return h.connect(credential.token, name);
}

function transfers(threadId: string, args: Record<string, unknown> = {}): Promise<ThreadTransfersOutput> {
  return h.owner.ok<ThreadTransfersOutput>("t3_thread_transfers", { threadId, ...args });
}

describe("t3_thread_fork", () => {
  it("forks onto another provider, whose first turn input carries the source's transcript, with a fork item in both threads", async () => {
    const source = await threadWithRuns(["alpha", "beta"]);
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, target: { providerInstanceId: "b" }, message: script({ say: "{{context}}" }), title: "Forked" });
    expect(fork).toMatchObject({ sourceThreadId: source, sourceRunOrdinal: 2, providerInstanceId: "b", model: "b-1", title: "Forked", contextMode: "portable", coveredRunOrdinals: { from: 1, to: 2 } });
    expect(fork.transferBytes).toBeGreaterThan(0);
    expect((await h.waitForEnd(fork.runId!)).status).toBe("completed");
    const [said] = h.assistantTexts(fork.threadId, fork.runId!);
    expect(said).toMatch(new RegExp(`^<loom_context>\\n<fork source_thread="${source}" through_run="2">`));
    expect(said).toContain("<user>alpha</user>\n<assistant>Echo: alpha</assistant>");
    expect(said).toContain("<user>beta</user>");
    expect(Buffer.byteLength(said!.slice("<loom_context>\n".length, said!.lastIndexOf("\n</loom_context>")))).toBe(fork.transferBytes);
    expect(h.state.threads.get(fork.threadId)).toMatchObject({ lineage: { parentThreadId: source, relation: "fork" }, runtimeMode: "full-access" });
    const marker = { type: "fork", sourceThreadId: source, targetThreadId: fork.threadId, sourceRunOrdinal: 2 };
    expect(h.items(source).filter((item) => item.type === "fork")).toEqual([expect.objectContaining(marker)]);
    expect(h.items(fork.threadId).filter((item) => item.type === "fork")).toEqual([expect.objectContaining(marker)]);
    expect(h.state.transfers.get(fork.contextTransferId!)).toMatchObject({ kind: "fork", status: "consumed", deliveredRunId: fork.runId });
  });

  it("forks at an earlier run and stays idle until the first message, which receives the transfer", async () => {
    const source = await threadWithRuns(["one", "two", "three"]);
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, sourceRunOrdinal: 1 });
    expect(fork).toMatchObject({ sourceRunOrdinal: 1, providerInstanceId: "a", runId: null, status: "idle", coveredRunOrdinals: { from: 1, to: 1 }, title: "Fork of Source" });
    expect(h.state.transfers.get(fork.contextTransferId!)).toMatchObject({ status: "pending", deliveredRunId: null });
    const runId = await send(fork.threadId, "what came before?");
    const [echo] = h.assistantTexts(fork.threadId, runId);
    expect(echo).toContain("<user>one</user>");
    expect(echo).not.toContain("<user>two</user>");
    expect(echo!.endsWith("what came before?")).toBe(true);
    expect(h.state.transfers.get(fork.contextTransferId!)).toMatchObject({ status: "consumed", deliveredRunId: runId });
  });

  it("returns the same fork for a retry with the same clientRequestId", async () => {
    const source = await threadWithRuns(["once"]);
    const first = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, message: "go", clientRequestId: "fork-once" });
    const again = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, message: "go", clientRequestId: "fork-once" });
    expect(again).toMatchObject({ threadId: first.threadId, runId: first.runId, contextTransferId: first.contextTransferId });
    expect([...h.state.threads.values()].filter((t) => t.lineage.parentThreadId === source)).toHaveLength(1);
    expect(h.runs(first.threadId)).toHaveLength(1);
  });

  it("refuses a bad fork point, an unknown thread, an unavailable provider or model, writing nothing", async () => {
    const source = await threadWithRuns(["only"]);
    const before = h.state.lastSequence;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ threadId: source, sourceRunOrdinal: 5 }, "invalid_request", "invalid_fork_point"],
      [{ threadId: "thread:nope" }, "thread_not_found", "thread:nope"],
      [{ threadId: source, target: { providerInstanceId: "missing" } }, "provider_unavailable", "missing"],
      [{ threadId: source, target: { model: "b-1" } }, "model_unavailable", "b-1"],
      [{ threadId: source, sourceRunOrdinal: 0 }, "invalid_request", "sourceRunOrdinal"],
    ];
    for (const [args, code, message] of cases) {
      expect(await h.owner.call("t3_thread_fork", args), JSON.stringify(args)).toMatchObject({ errorCode: code, errorMessage: expect.stringContaining(message) });
    }
    // The refused fork point left a receipt, never an event.
    expect(h.state.lastSequence).toBe(before);
  });

  it("holds the privilege ceiling: no fork without a live run; the fork's modes never exceed the caller's", async () => {
    const wide = await threadWithRuns(["wide open"]);
    const idle = await threadWithRuns([]);
    const careful = await h.createThread({ title: "Careful", target: { providerInstanceId: "a" }, runtimeMode: "approval-required", prompt: script({ sleep: 60_000 }) });
    await h.waitForRun(careful.runId!, "running");
    const idleAgent = await agentOf(idle, "idle-fork");
    const carefulAgent = await agentOf(careful.threadId, "careful-fork");
    const before = h.state.lastSequence;
    expect(await idleAgent.call("t3_thread_fork", { threadId: wide })).toMatchObject({ errorCode: "parent_not_active" });
    expect(await carefulAgent.call("t3_thread_fork", { threadId: wide, runtimeMode: "full-access" })).toMatchObject({ errorCode: "runtime_mode_escalation_denied" });
    expect(h.state.lastSequence).toBe(before);
    const narrowed = await carefulAgent.ok<ThreadForkOutput>("t3_thread_fork", { threadId: wide });
    expect(narrowed).toMatchObject({ runtimeMode: "approval-required", sourceThreadId: wide });
    expect(h.state.threads.get(narrowed.threadId)).toMatchObject({ runtimeMode: "approval-required", createdBy: "agent", creationSource: "mcp" });
    // Forking is a write: not even its own thread between runs (docs/mcp.md, Policy).
    expect(await idleAgent.call("t3_thread_fork", { threadId: idle })).toMatchObject({ errorCode: "parent_not_active" });
  });
});

describe("t3_thread_merge_back", () => {
  it("sends a fork's finished runs to its source, whose next run receives them; a retry replays; nothing new is refused", async () => {
    const source = await threadWithRuns(["plan the work"]);
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, target: { providerInstanceId: "b" }, message: "try approach B" });
    await h.waitForEnd(fork.runId!);
    const merged = await h.owner.ok<ThreadMergeBackOutput>("t3_thread_merge_back", { threadId: fork.threadId, clientRequestId: "merge-1" });
    expect(merged).toMatchObject({ threadId: fork.threadId, sourceThreadId: source, transfer: { kind: "merge_back", direction: "outgoing", threadId: source, status: "pending", coveredRunOrdinals: { from: 1, to: 1 } } });
    const retried = await h.owner.ok<ThreadMergeBackOutput>("t3_thread_merge_back", { threadId: fork.threadId, clientRequestId: "merge-1" });
    expect(retried).toMatchObject({ commandId: merged.commandId, transfer: { transferId: merged.transfer.transferId } });
    expect(h.items(source).filter((item) => item.type === "notification")).toEqual([expect.objectContaining({ title: "Merged back from Fork of Source", sourceThreadId: fork.threadId })]);
    expect(await h.owner.call("t3_thread_merge_back", { threadId: fork.threadId })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("nothing_to_merge") });

    const runId = await send(source, script({ say: "{{context}}" }));
    const [said] = h.assistantTexts(source, runId);
    expect(said).toMatch(new RegExp(`^<loom_context>\\n<merge_back from_thread="${fork.threadId}" relation="fork" runs="1">`));
    expect(said).toContain("<user>try approach B</user>");
    expect(h.state.transfers.get(merged.transfer.transferId)).toMatchObject({ status: "consumed", deliveredRunId: runId });

    const summary = await h.owner.ok<ThreadMergeBackOutput>("t3_thread_merge_back", { threadId: fork.threadId, summary: "B is faster." });
    expect(summary.transfer).toMatchObject({ status: "pending", coveredRunOrdinals: null });
    expect(await h.owner.call("t3_thread_merge_back", { threadId: source })).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("no_merge_source") });
    expect(await h.owner.call("t3_thread_merge_back", { threadId: "thread:nope" })).toMatchObject({ errorCode: "thread_not_found" });
    expect(await h.owner.call("t3_thread_merge_back", {})).toMatchObject({ errorCode: "invalid_request", errorMessage: expect.stringContaining("threadId is required") });
  });

  it("lets a fork's own agent merge back into a source no broader than it, and refuses a broader one", async () => {
    const narrowSource = await threadWithRuns(["narrow"], { runtimeMode: "approval-required" });
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", {
      threadId: narrowSource,
      message: script({ say: "found it" }, { call: "t3_thread_merge_back", args: { summary: "The answer is 42." }, as: "m" }, { say: "merged {{m.transfer.status}}" }),
    });
    expect((await h.waitForEnd(fork.runId!)).status).toBe("completed");
    expect(h.assistantTexts(fork.threadId, fork.runId!)).toEqual(["found it", "merged pending"]);
    const merged = (await transfers(narrowSource, { direction: "incoming", includeText: true })).transfers.find((t) => t.kind === "merge_back")!;
    expect(merged.text).toContain("<summary>The answer is 42.</summary>");

    // A caller without a live run may not merge another thread back into its source.
    const idle = await threadWithRuns([]);
    const idleAgent = await agentOf(idle, "idle-merge");
    await send(fork.threadId, "more work");
    expect(await idleAgent.call("t3_thread_merge_back", { threadId: fork.threadId })).toMatchObject({ errorCode: "parent_not_active" });

    const wideSource = await threadWithRuns(["wide"]);
    const narrowFork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", {
      threadId: wideSource,
      runtimeMode: "approval-required",
      message: script({ call: "t3_thread_merge_back", args: { summary: "escalate?" }, as: "m" }, { say: "{{m.error.code}}" }),
    });
    expect((await h.waitForEnd(narrowFork.runId!)).status).toBe("completed");
    expect(h.assistantTexts(narrowFork.threadId, narrowFork.runId!)).toEqual(["runtime_mode_escalation_denied"]);
    expect((await transfers(wideSource, { direction: "incoming" })).transfers.filter((t) => t.kind === "merge_back")).toEqual([]);
  });
});

describe("t3_thread_transfers", () => {
  it("lists a thread's context transfers both ways, newest first, with handoffs, sizes and covered runs", async () => {
    const source = await threadWithRuns(["first"]);
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, message: "forked work" });
    await h.waitForEnd(fork.runId!);
    await h.owner.ok("t3_thread_merge_back", { threadId: fork.threadId });
    await h.owner.ok<ThreadConfigureOutput>("t3_thread_configure", { threadId: source, providerInstanceId: "b" });

    const all = await transfers(source);
    expect(all.total).toBe(3);
    expect(all.transfers.map((t) => [t.kind, t.direction, t.status])).toEqual([
      ["handoff", "incoming", "pending"],
      ["merge_back", "incoming", "pending"],
      ["fork", "outgoing", "consumed"],
    ]);
    expect(all.transfers[0]).toMatchObject({ strategy: "full_thread_summary", coveredRunOrdinals: { from: 1, to: 1 }, bytes: 0 });
    expect(all.transfers[2]).toMatchObject({ threadId: fork.threadId, sourceThreadId: source, coveredRunOrdinals: { from: 1, to: 1 }, deliveredRunId: fork.runId });
    expect(all.transfers[2]!.bytes).toBe(fork.transferBytes);
    expect(all.transfers[2]).not.toHaveProperty("text");
    expect((await transfers(source, { direction: "outgoing" })).transfers.map((t) => t.kind)).toEqual(["fork"]);
    const withText = await transfers(fork.threadId, { includeText: true, limit: 1 });
    expect(withText).toMatchObject({ total: 2, transfers: [{ kind: "merge_back", direction: "outgoing", truncated: false }] });
    expect(withText.transfers[0]!.text).toContain("<user>forked work</user>");
    expect(await h.owner.call("t3_thread_transfers", { threadId: "thread:nope" })).toMatchObject({ errorCode: "thread_not_found" });
  });
});

describe("delegate_task relation fork", () => {
  it("starts the child from the parent's context instead of a bare prompt", async () => {
    const parent = await h.createThread({
      title: "Forking parent",
      target: { providerInstanceId: "a" },
      prompt: script({ call: "delegate_task", args: { task: childScript({ say: "{{context}}" }), relation: "fork", mode: "wait", target: { providerInstanceId: "b" } }, as: "d" }, { say: "{{d.status}} {{d.childThreadId}}" }),
    });
    expect((await h.waitForEnd(parent.runId!)).status).toBe("completed");
    const [status, childThreadId] = h.assistantTexts(parent.threadId)[0]!.split(" ");
    expect(status).toBe("completed");
    expect(h.state.threads.get(childThreadId!)).toMatchObject({ lineage: { parentThreadId: parent.threadId, relation: "fork" }, providerInstanceId: "b" });
    const [said] = h.assistantTexts(childThreadId!);
    expect(said).toMatch(new RegExp(`^<loom_context>\\n<fork source_thread="${parent.threadId}" through_run="1">`));
    expect(said).toContain('<run ordinal="1" kind="user_turn" status="running">');
    expect(said).toContain("delegate_task");
    expect((await transfers(childThreadId!)).transfers.map((t) => [t.kind, t.direction, t.status])).toEqual([
      ["subagent_result", "outgoing", "consumed"],
      ["subagent_spawn", "incoming", "consumed"],
      ["fork", "incoming", "consumed"],
    ]);
    const list = await h.owner.ok<{ threads: { threadId: string }[] }>("t3_thread_list", { limit: 100 });
    expect(list.threads.map((t) => t.threadId)).not.toContain(childThreadId);
  });
});

describe("the 64,000-byte cap", () => {
  it("keeps a fork's and a switch's context within 64,000 bytes, newest runs first, saying what was cut", async () => {
    const big = (k: number) => `message ${k} ${"word ".repeat(1_200)}`;
    const source = await threadWithRuns(Array.from({ length: 12 }, (_, i) => big(i + 1)));
    const fork = await h.owner.ok<ThreadForkOutput>("t3_thread_fork", { threadId: source, target: { providerInstanceId: "b" }, message: script({ say: "{{context}}" }) });
    expect(fork.transferBytes).toBeLessThanOrEqual(HANDOFF_BYTE_CAP);
    expect(fork.transferBytes).toBeGreaterThan(HANDOFF_BYTE_CAP - 13_000);
    await h.waitForEnd(fork.runId!);
    const [said] = h.assistantTexts(fork.threadId, fork.runId!);
    expect(said).toMatch(/<omitted runs="1-\d+" count="\d+">Runs 1-\d+ \(\d+ runs\) were left out to stay within 16000 tokens and 64000 bytes; read the full text with t3_thread_read on thread /);
    expect(said).toContain("<user>message 12 word");
    expect(said).not.toContain("<user>message 1 word");

    const switched = await h.owner.ok<ThreadConfigureOutput>("t3_thread_configure", { threadId: source, providerInstanceId: "b" });
    expect(switched.handoff).toMatchObject({ coveredRunOrdinals: { from: 1, to: 12 } });
    await send(source, "after the switch");
    const handoff = [...h.state.handoffs.values()].find((candidate) => candidate.threadId === source)!;
    expect(Buffer.byteLength(handoff.summaryText!)).toBeLessThanOrEqual(HANDOFF_BYTE_CAP);
    expect(handoff.summaryText).toContain("<user>message 12 word");
    expect(handoff.summaryText).toMatch(/<omitted runs="1-\d+"/);
  });
});
