import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectAsThread, delegateStep, launchParent, onlyTask, startDelegationHarness, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";
import { ROLE_INSTRUCTIONS } from "./delegate.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";

/**
 * delegate_task end to end (spec 000, Delegated Task Lifecycle): a parent on
 * scripted instance `a` delegates over real MCP to a child on instance `b`;
 * everything is read back from Loom's own state.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

/** Launch a parent, wait for its first turn to end, and return its thread id. */
async function runParent(steps: readonly Record<string, unknown>[]): Promise<{ threadId: string; runId: string; result: unknown }> {
  const parent = await launchParent(h, steps);
  const waited = await h.waitViaMcp(parent.threadId, parent.runId);
  expect(waited.status).toBe("completed");
  return { threadId: parent.threadId, runId: parent.runId, result: waited.result };
}

describe("cross-provider delegated completion", () => {
  let parent: { threadId: string; runId: string; result: unknown };
  beforeAll(async () => {
    parent = await runParent([
      { say: "PARENT-PRIVATE-CONTEXT: only the parent knows this." },
      delegateStep([{ say: "the answer is 42" }], { mode: "wait", clientRequestId: "r1", title: "Find the answer" }, "t"),
      { say: "child said: {{t.summary}} ({{t.status}})" },
    ]);
  });

  it("hands the child's result back to the waiting parent", () => {
    expect(parent.result).toBe("child said: the answer is 42 (completed)");
    const [call] = toolResults<DelegateTaskResult>(h, parent.threadId, "delegate_task");
    expect(call!.status).toBe("completed");
    expect(call!.result).toMatchObject({
      status: "completed",
      workState: "result_available",
      providerInstanceId: "b",
      model: "b-1",
      summary: "the answer is 42",
      hasPendingQuestion: false,
      pendingApproval: null,
      waitTimedOut: false,
    });
    const task = onlyTask(h, parent.threadId);
    expect(task).toMatchObject({ status: "completed", providerInstanceId: "b", model: "b-1", summary: "the answer is 42", completionDelivery: "acknowledged" });
    expect(h.run(task.childRunId!)).toMatchObject({ status: "completed", providerInstanceId: "b", kind: "delegated_task", modelSelection: { providerInstanceId: "b", model: "b-1" } });
  });

  it("gives the child only the task prompt, nothing of the parent's conversation", () => {
    const task = onlyTask(h, parent.threadId);
    const childItems = h.items(task.childThreadId);
    const userMessages = childItems.filter((item) => item.type === "user_message");
    expect(userMessages).toHaveLength(1);
    expect(userMessages[0]).toMatchObject({ text: script({ say: "the answer is 42" }), runId: task.childRunId, createdBy: "agent" });
    expect(JSON.stringify(childItems)).not.toContain("PARENT-PRIVATE-CONTEXT");
    expect(h.runs(task.childThreadId)).toHaveLength(1);
  });

  it("records lineage, parent timeline items, execution nodes and the subagent projection", () => {
    const task = onlyTask(h, parent.threadId);
    const child = h.state.threads.get(task.childThreadId)!;
    expect(child.lineage).toEqual({ relation: "subagent", parentThreadId: parent.threadId, rootThreadId: parent.threadId, parentNodeId: task.parentNodeId });
    expect(child).toMatchObject({ title: "Find the answer", providerInstanceId: "b", createdBy: "agent", creationSource: "mcp" });

    const parentItems = h.items(parent.threadId);
    const created = parentItems.find((item) => item.type === "thread_created");
    expect(created).toMatchObject({ childThreadId: child.id, relation: "subagent", runId: parent.runId });
    const subagent = parentItems.find((item) => item.type === "subagent");
    expect(subagent).toMatchObject({ subagentId: task.taskId, childThreadId: child.id, status: "completed", result: "the answer is 42", prompt: task.task });
    expect(subagent!.position).toBeGreaterThan(created!.position);

    const nodes = h.state.nodes;
    expect(nodes.get(task.parentNodeId)).toMatchObject({ threadId: parent.threadId, runId: parent.runId, kind: "subagent", parentNodeId: null, status: "completed" });
    expect(nodes.get(task.childNodeId)).toMatchObject({ threadId: child.id, runId: task.childRunId, kind: "turn", parentNodeId: task.parentNodeId, status: "completed" });
    expect(nodes.get(task.childNodeId)!.endedAt).not.toBeNull();

    expect(h.state.subagents.get(task.taskId)).toMatchObject({
      threadId: parent.threadId,
      runId: parent.runId,
      childThreadId: child.id,
      providerInstanceId: "b",
      driver: "scripted",
      origin: "app_delegated",
      status: "completed",
      result: "the answer is 42",
    });
    expect(h.state.taskByChildThread.get(child.id)).toBe(task.taskId);
  });

  it("records a consumed spawn transfer into the child and a result transfer into the parent", () => {
    const task = onlyTask(h, parent.threadId);
    const transfers = [...h.state.transfers.values()].filter((transfer) => transfer.subagentId === task.taskId);
    expect(transfers.map((transfer) => transfer.kind).sort()).toEqual(["subagent_result", "subagent_spawn"]);
    const spawn = transfers.find((transfer) => transfer.kind === "subagent_spawn")!;
    expect(spawn).toMatchObject({ threadId: task.childThreadId, sourceThreadId: parent.threadId, status: "consumed", runId: task.childRunId, text: task.task });
    const result = transfers.find((transfer) => transfer.kind === "subagent_result")!;
    expect(result).toMatchObject({ id: task.resultContextTransferId, threadId: parent.threadId, sourceThreadId: task.childThreadId, runId: task.childRunId, text: "the answer is 42" });
    // The wait handed the result over, so it is consumed.
    expect(result.status).toBe("consumed");
    expect(result.consumedAt).not.toBeNull();
  });
});

describe("child context with a role", () => {
  it("puts the role instruction before the task and nothing else", async () => {
    const brief = script({ say: "reviewed" });
    const parent = await runParent([{ say: "PARENT-SECRET-42" }, delegateStep([{ say: "reviewed" }], { mode: "wait", role: "review" }, "t"), { say: "{{t.summary}}" }]);
    // The instruction makes the input plain text, so the scripted child echoes exactly what it got.
    expect(parent.result).toBe(`Echo: ${ROLE_INSTRUCTIONS.review}\n\n${brief}`);
    const task = onlyTask(h, parent.threadId);
    const userMessages = h.items(task.childThreadId).filter((item) => item.type === "user_message");
    expect(userMessages.map((item) => (item.type === "user_message" ? item.text : null))).toEqual([`${ROLE_INSTRUCTIONS.review}\n\n${brief}`]);
    expect(JSON.stringify(h.items(task.childThreadId))).not.toContain("PARENT-SECRET-42");
    expect(task).toMatchObject({ role: "review", task: brief });
  });
});

describe("nested lineage", () => {
  it("keeps the root thread through a grandchild", async () => {
    const grandchild = [{ say: "deep result" }];
    const child = [delegateStep(grandchild, { mode: "wait" }, "g"), { say: "child got: {{g.summary}}" }];
    const parent = await runParent([delegateStep(child, { mode: "wait" }, "t"), { say: "{{t.summary}}" }]);
    expect(parent.result).toBe("child got: deep result");
    const task = onlyTask(h, parent.threadId);
    const nested = onlyTask(h, task.childThreadId);
    expect(nested.depth).toBe(2);
    expect(h.state.threads.get(nested.childThreadId)!.lineage).toEqual({
      relation: "subagent",
      parentThreadId: task.childThreadId,
      rootThreadId: parent.threadId,
      parentNodeId: nested.parentNodeId,
    });
    expect(h.state.nodes.get(nested.parentNodeId)).toMatchObject({ threadId: task.childThreadId, kind: "subagent", status: "completed" });
  });
});

describe("idempotent retries", () => {
  it("returns the same task and child for a repeated clientRequestId", async () => {
    const child = [{ sleep: 100 }, { say: "once" }];
    const parent = await runParent([
      delegateStep(child, { clientRequestId: "same" }, "first"),
      delegateStep(child, { clientRequestId: "same" }, "second"),
      delegateStep(child, { clientRequestId: "same", mode: "wait" }, "third"),
      { say: "{{first.taskId}}|{{second.taskId}}|{{third.taskId}}|{{third.summary}}" },
    ]);
    const task = onlyTask(h, parent.threadId);
    expect(parent.result).toBe(`${task.taskId}|${task.taskId}|${task.taskId}|once`);
    const children = [...h.state.threads.values()].filter((thread) => thread.lineage.parentThreadId === parent.threadId);
    expect(children.map((thread) => thread.id)).toEqual([task.childThreadId]);
    expect(h.runs(task.childThreadId)).toHaveLength(1);
  });

  it("answers concurrent calls with the same clientRequestId with one task", async () => {
    const parent = await launchParent(h, [{ sleep: 1_500 }, { say: "done" }]);
    await h.waitForRun(parent.runId, "running");
    // A second client on the parent's own provider session, as a retrying agent would be.
    const session = [...h.state.providerSessions.values()].find((candidate) => candidate.threadId === parent.threadId && candidate.releasedAt === null)!;
    const credential = await h.server.credentials.issue({ environmentId: h.server.environmentId, threadId: parent.threadId, providerInstanceId: "a", providerSessionId: session.id });
    const agents = await Promise.all([1, 2, 3, 4].map(() => h.connect(credential.token)));
    const args = { task: script({ say: "once" }), target: { providerInstanceId: "b" }, clientRequestId: "concurrent" };
    const results = await Promise.all(agents.map((agent) => agent.ok<DelegateTaskResult>("delegate_task", args)));
    const task = onlyTask(h, parent.threadId);
    expect(results.map((result) => result.taskId)).toEqual(agents.map(() => task.taskId));
    expect([...h.state.threads.values()].filter((thread) => thread.lineage.parentThreadId === parent.threadId)).toHaveLength(1);
  });

  it("creates new work for calls without a clientRequestId", async () => {
    const parent = await runParent([delegateStep([{ say: "x" }], {}, "first"), delegateStep([{ say: "x" }], {}, "second")]);
    const tasks = tasksOf(h, parent.threadId);
    expect(tasks).toHaveLength(2);
    expect(new Set(tasks.map((task) => task.childThreadId)).size).toBe(2);
  });
});

describe("parent not active", () => {
  it("refuses delegate_task from an outside client, which has no calling run", async () => {
    const before = h.state.tasks.size;
    const outcome = await h.owner.call("delegate_task", { task: "do it", target: { providerInstanceId: "b" } });
    expect(outcome.isError).toBe(true);
    expect(outcome.errorCode).toBe("parent_not_active");
    expect(h.state.tasks.size).toBe(before);
  });

  it("refuses delegate_task from a thread credential whose session does not carry a live run", async () => {
    const parent = await runParent([{ say: "idle afterwards" }]);
    const client = await connectAsThread(h, parent.threadId);
    const outcome = await client.call("delegate_task", { task: "do it" });
    expect(outcome.errorCode).toBe("parent_not_active");
    expect(tasksOf(h, parent.threadId)).toHaveLength(0);
  });
});
