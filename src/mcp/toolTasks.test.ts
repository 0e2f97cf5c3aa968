import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { GetTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { TOOL_TASK_SUPPORT } from "../app/durableTasks/taskSupport.js";
import { TOOL_CONTRACTS } from "../contracts/tools/toolContracts.js";
import { childScript, launchParent, onlyTask, startDelegationHarness, tasksOf, waitForResult } from "../testkit/delegationHarness.js";
import type { LoomHarness } from "../testkit/loomHarness.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * delegate_task as an MCP 2025-11-25 task over real Streamable HTTP, with the
 * SDK's own client: the task is Loom's delegated task, answered from the
 * engine's state (so a restarted server answers it too), scoped to the
 * parent thread's credentials and the owner.
 */

let h: LoomHarness;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await h.close();
});

async function sdkClient(token: string): Promise<Client> {
  const client = new Client({ name: "loom-task-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(h.server.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

/** A parent whose turn stays live (it sleeps), and a client with its provider session's own credential. */
async function liveParent(): Promise<{ threadId: string; client: Client }> {
  const parent = await launchParent(h, [{ sleep: 120_000 }], "rigid");
  await h.waitForRun(parent.runId, "running");
  const session = [...h.state.providerSessions.values()].find((candidate) => candidate.threadId === parent.threadId && candidate.releasedAt === null)!;
  const credential = await h.server.credentials.issue({
    environmentId: h.server.environmentId,
    threadId: parent.threadId,
    providerInstanceId: session.providerInstanceId,
    providerSessionId: session.id,
  });
  return { threadId: parent.threadId, client: await sdkClient(credential.token) };
}

function delegateAsTask(client: Client, child: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}, ttl = 60_000) {
  return client.request(
    { method: "tools/call", params: { name: "delegate_task", arguments: { task: childScript(...child), target: { providerInstanceId: "b" }, ...extra } } },
    CreateTaskResultSchema,
    { task: { ttl } },
  );
}

function statusOf(client: Client, taskId: string, status: GetTaskResult["status"]): Promise<GetTaskResult> {
  return pollUntil(() => client.experimental.tasks.getTask(taskId), (task) => task.status === status, `task ${taskId} ${status}`);
}

async function refusal(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof McpError)) throw new Error(`expected an McpError, got ${String(error)}`);
  return error;
}

function workflowAsTask(client: Client, script: string) {
  return client.request({ method: "tools/call", params: { name: "t3_workflow_start", arguments: { script } } }, CreateTaskResultSchema, { task: { ttl: 60_000 } });
}

/** A workflow script with one agent() step whose scripted child runs `child` on instance b. */
function oneAgentWorkflow(child: readonly Record<string, unknown>[]): string {
  return `return await agent(${JSON.stringify(childScript(...child))}, { target: { providerInstanceId: "b" } });`;
}

describe("delegate_task as an MCP task", () => {
  it("lists taskSupport per tool from TOOL_TASK_SUPPORT and advertises tasks for tools/call", async () => {
    h = await startDelegationHarness();
    const owner = await sdkClient(h.ownerToken);
    expect(owner.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await owner.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support.delegate_task).toBe("optional");
    expect(support.t3_thread_list).toBe("forbidden");
    for (const tool of tools) {
      if (Object.hasOwn(TOOL_CONTRACTS, tool.name)) expect([tool.name, tool.execution?.taskSupport]).toEqual([tool.name, TOOL_TASK_SUPPORT[tool.name as keyof typeof TOOL_TASK_SUPPORT]]);
    }
  });

  it("answers a handle at once, input_required on the child's question, then completed with the wait-mode result", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const notified: { taskId: string; status: string }[] = [];
    parent.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notified.push({ taskId: notification.params.taskId, status: notification.params.status });
    });
    const created = await delegateAsTask(parent.client, [{ ask: "which branch?" }, { say: "done on {{answer}}" }], { clientRequestId: "round-1" });
    const task = onlyTask(h, parent.threadId);
    expect(created.task.taskId).toBe(task.taskId);
    expect(["working", "input_required"]).toContain(created.task.status);
    expect(created.task.ttl).toBe(60_000);
    expect(created.task.pollInterval).toBeGreaterThan(0);
    // A retried task-augmented call with the same key is the same task.
    const retried = await delegateAsTask(parent.client, [{ ask: "which branch?" }, { say: "done on {{answer}}" }], { clientRequestId: "round-1" });
    expect(retried.task.taskId).toBe(task.taskId);
    expect(tasksOf(h, parent.threadId)).toHaveLength(1);

    const asking = await statusOf(parent.client, task.taskId, "input_required");
    expect(asking.statusMessage).toContain(task.childThreadId);
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === task.childThreadId && candidate.status === "pending")!;
    const answered = await parent.client.callTool({ name: "t3_pending_request_respond", arguments: { threadId: task.childThreadId, requestId: request.id, answer: "main" } });
    expect(answered.isError).not.toBe(true);

    const done = await statusOf(parent.client, task.taskId, "completed");
    expect(done.statusMessage).toBe("done on main");
    const result = await parent.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).not.toBe(true);
    expect(result.structuredContent).toMatchObject({ taskId: task.taskId, status: "completed", workState: "result_available", summary: "done on main", waitTimedOut: false });
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: task.taskId });
    // The same record task_status answers.
    const status = await parent.client.callTool({ name: "task_status", arguments: { taskId: task.taskId } });
    expect(status.structuredContent).toEqual(result.structuredContent);

    const listed = await parent.client.experimental.tasks.listTasks();
    expect(listed.tasks.map((entry) => [entry.taskId, entry.status])).toEqual([[task.taskId, "completed"]]);

    // notifications/tasks/status on the open session: each change once, ending with the terminal status.
    await pollUntil(() => notified, (seen) => seen.some((entry) => entry.status === "completed"), "a completed notification");
    expect(notified.every((entry) => entry.taskId === task.taskId)).toBe(true);
    const statuses = notified.map((entry) => entry.status);
    expect(statuses).toContain("input_required");
    expect(statuses.at(-1)).toBe("completed");
    expect(statuses.filter((status, i) => status === statuses[i - 1])).toEqual([]);
  });

  it("records the handle with the delegation itself, and gives one to a task a plain call with the same clientRequestId started", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await delegateAsTask(parent.client, [{ say: "one" }], {}, 120_000);
    const first = onlyTask(h, parent.threadId);
    expect(created.task.taskId).toBe(first.taskId);
    // One decision wrote both: the handle's times are the task's.
    expect(h.state.toolTasks.get(first.taskId)).toMatchObject({ ownerThreadId: parent.threadId, work: { tool: "delegate_task" }, ttlMs: 120_000, createdAt: first.createdAt });

    const plain = await parent.client.callTool({ name: "delegate_task", arguments: { task: childScript({ say: "two" }), target: { providerInstanceId: "b" }, clientRequestId: "plain-first" } });
    expect(plain.isError).not.toBe(true);
    const taskId = (plain.structuredContent as { taskId: string }).taskId;
    expect(h.state.toolTasks.has(taskId)).toBe(false);
    const retried = await delegateAsTask(parent.client, [{ say: "two" }], { clientRequestId: "plain-first" }, 90_000);
    expect(retried.task).toMatchObject({ taskId, ttl: 90_000 });
    expect(tasksOf(h, parent.threadId)).toHaveLength(2);
  });

  it("cancels through tasks/cancel (task_cancel: the child stops), and refuses to cancel it again", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await delegateAsTask(parent.client, [{ sleep: 120_000 }, { say: "never" }]);
    const task = onlyTask(h, parent.threadId);
    await h.waitForRun(task.childRunId!, "running");
    const cancelled = await parent.client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(h.state.tasks.get(task.taskId)?.cancelRequestedAt).not.toBeNull();
    const childRun = await h.waitForEnd(task.childRunId!);
    expect(childRun.status).not.toBe("completed");
    await waitForResult(h, task.taskId);
    expect((await parent.client.experimental.tasks.getTask(task.taskId)).status).toBe("cancelled");
    const again = await refusal(parent.client.experimental.tasks.cancelTask(task.taskId));
    expect(again.code).toBe(ErrorCode.InvalidParams);
    expect(again.message).toContain("task_not_cancellable");
  });

  it("shows a task only to its parent thread's credentials and the owner; refuses forbidden tools and bad task params, writing nothing", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await delegateAsTask(parent.client, [{ say: "mine" }]);
    const other = await liveParent();
    const hidden = await refusal(other.client.experimental.tasks.getTask(created.task.taskId));
    expect(hidden.code).toBe(ErrorCode.InvalidParams);
    expect(hidden.message).toContain("task_not_found");
    expect((await other.client.experimental.tasks.listTasks()).tasks).toEqual([]);
    const owner = await sdkClient(h.ownerToken);
    expect((await owner.experimental.tasks.getTask(created.task.taskId)).taskId).toBe(created.task.taskId);
    expect((await owner.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(created.task.taskId);
    expect((await refusal(owner.experimental.tasks.getTask("no-such-task"))).message).toContain("task_not_found");

    const sequence = h.state.lastSequence;
    const forbidden = await refusal(
      other.client.request({ method: "tools/call", params: { name: "t3_thread_list", arguments: {} } }, CreateTaskResultSchema, { task: { ttl: 1_000 } }),
    );
    expect(forbidden.code).toBe(ErrorCode.MethodNotFound);
    expect(forbidden.message).toContain("execution.taskSupport is forbidden");
    const negative = await refusal(delegateAsTask(other.client, [{ say: "x" }], {}, -1));
    expect(negative.code).toBe(ErrorCode.InvalidParams);
    expect(negative.message).toContain("task.ttl");
    const dryRun = await refusal(delegateAsTask(other.client, [{ say: "x" }], { dryRun: true }));
    expect(dryRun.message).toContain("dryRun");
    expect((await refusal(owner.experimental.tasks.listTasks("not-a-cursor"))).message).toContain("cursor");
    expect(tasksOf(h, other.threadId)).toEqual([]);
    expect(h.state.lastSequence).toBe(sequence);
  });

  it("hands the result over through tasks/result, not as a notice, while the calling turn goes on; a result left unread is noticed once that turn ends", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const read = await delegateAsTask(parent.client, [{ say: "read by the host" }]);
    const unread = await delegateAsTask(parent.client, [{ say: "left unread" }]);
    await waitForResult(h, read.task.taskId);
    await waitForResult(h, unread.task.taskId);
    const result = await parent.client.experimental.tasks.getTaskResult(read.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ summary: "read by the host" });
    // The read acknowledged it; a notice the reactor sent when the child finished would have been decided before it.
    expect(h.state.tasks.get(read.task.taskId)).toMatchObject({ completionDelivery: "acknowledged", notices: [] });
    expect(h.state.tasks.get(unread.task.taskId)).toMatchObject({ completionDelivery: "pending", notices: [] });

    const owner = await sdkClient(h.ownerToken);
    await owner.callTool({ name: "t3_thread_interrupt", arguments: { threadId: parent.threadId } });
    const noticed = await pollUntil(() => h.state.tasks.get(unread.task.taskId)!, (task) => task.completionDelivery !== "pending", "the unread result noticed");
    expect(noticed.completionDelivery).toBe("delivered");
    expect(noticed.notices).toMatchObject([{ kind: "completion" }]);
    expect(h.state.tasks.get(read.task.taskId)!.notices).toEqual([]);
  });

  it("answers tasks/get and tasks/result for a task created before a restart", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await delegateAsTask(parent.client, [{ say: "survives" }]);
    await waitForResult(h, created.task.taskId);
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    h = await h.restart();
    const owner = await sdkClient(h.ownerToken);
    const after = await owner.experimental.tasks.getTask(created.task.taskId);
    expect([after.taskId, after.status, after.createdAt]).toEqual([created.task.taskId, "completed", created.task.createdAt]);
    const result = await owner.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ taskId: created.task.taskId, summary: "survives" });
  });
});

describe("t3_workflow_start as an MCP task", () => {
  it("answers the workflow as the task: completed with the t3_workflow_status record, listed beside delegated tasks", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await workflowAsTask(parent.client, oneAgentWorkflow([{ say: "workflow step done" }]));
    const workflow = [...h.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId)!;
    expect(created.task.taskId).toBe(workflow.workflowId);
    await statusOf(parent.client, workflow.workflowId, "completed");
    const result = await parent.client.experimental.tasks.getTaskResult(workflow.workflowId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ workflowId: workflow.workflowId, status: "completed", waitTimedOut: false });
    const status = await parent.client.callTool({ name: "t3_workflow_status", arguments: { workflowId: workflow.workflowId } });
    expect(result.structuredContent).toEqual(status.structuredContent);
    expect((await parent.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(workflow.workflowId);
  });

  it("is input_required while an agent() step's child asks, then completes once it is answered", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await workflowAsTask(parent.client, oneAgentWorkflow([{ ask: "which file?" }, { say: "reviewed {{answer}}" }]));
    const asking = await statusOf(parent.client, created.task.taskId, "input_required");
    const step = h.state.workflows.get(created.task.taskId)!.steps[0]!;
    expect(asking.statusMessage).toContain(step.childThreadId!);
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === step.childThreadId && candidate.status === "pending")!;
    const answered = await parent.client.callTool({ name: "t3_pending_request_respond", arguments: { threadId: step.childThreadId, requestId: request.id, answer: "a.ts" } });
    expect(answered.isError).not.toBe(true);
    await statusOf(parent.client, created.task.taskId, "completed");
    const result = await parent.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ workflowId: created.task.taskId, status: "completed" });
  });

  it("stops the workflow on tasks/cancel, as t3_workflow_stop does", async () => {
    h = await startDelegationHarness();
    const parent = await liveParent();
    const created = await workflowAsTask(parent.client, oneAgentWorkflow([{ sleep: 120_000 }, { say: "never" }]));
    const step = await h.until(() => h.state.workflows.get(created.task.taskId)?.steps.find((candidate) => candidate.taskId !== null), "the workflow's agent step");
    const cancelled = await parent.client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(h.state.workflows.get(created.task.taskId)?.status).toBe("stopped");
    expect(h.state.tasks.get(step.taskId!)?.cancelRequestedAt).not.toBeNull();
  });
});
