import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { GetTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { TOOL_TASK_BOUNDS } from "../contracts/entities/toolTasks.js";
import { DELEGATION_PROVIDERS, childScript, launchParent, onlyTask, waitForResult } from "../testkit/delegationHarness.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * The waits as MCP tasks over real Streamable HTTP, with the SDK's own
 * client: t3_thread_wait, t3_background_wait and t3_thread_send recorded as
 * a durable handle (src/core/toolTasks), answered from the engine's state
 * after a restart too, only to their creator; ttl and pollInterval clamped
 * and kept with the handle, and honoured (the app clock is skewed here, so
 * a task's expiry needs no waiting).
 */

let h: LoomHarness;
let skewMs = 0;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await h.close();
  skewMs = 0;
});

function start(): Promise<LoomHarness> {
  return LoomHarness.start({ config: { providers: DELEGATION_PROVIDERS }, clock: () => Date.now() + skewMs });
}

async function sdkClient(token: string): Promise<Client> {
  const client = new Client({ name: "loom-wait-task-test", version: "1.0.0" });
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

function callAsTask(client: Client, name: string, args: Record<string, unknown>, task: Record<string, unknown> = { ttl: 600_000 }) {
  return client.request({ method: "tools/call", params: { name, arguments: args } }, CreateTaskResultSchema, { task });
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

describe("the waits as MCP tasks", () => {
  it("lists the three waits as optional", async () => {
    h = await start();
    const { tools } = await (await sdkClient(h.ownerToken)).listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect([support.t3_thread_wait, support.t3_background_wait, support.t3_thread_send]).toEqual(["optional", "optional", "optional"]);
  });

  it("t3_thread_wait: input_required while the run asks, completed with the wait's own result, answered after a restart", async () => {
    h = await start();
    const owner = await sdkClient(h.ownerToken);
    const notified: string[] = [];
    owner.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notified.push(notification.params.status);
    });
    const thread = await h.launch({ title: "Asks", message: script({ ask: "which branch?" }, { say: "done on {{answer}}" }), target: { providerInstanceId: "a" } });
    const runId = (thread as { runId: string }).runId;
    const created = await callAsTask(owner, "t3_thread_wait", { threadId: thread.threadId });
    expect(created.task.taskId).toMatch(/^tool-task:/);
    expect(h.state.toolTasks.get(created.task.taskId)?.work).toEqual({ tool: "t3_thread_wait", threadId: thread.threadId, runId });

    const asking = await statusOf(owner, created.task.taskId, "input_required");
    expect(asking.statusMessage).toContain("t3_pending_request_respond");
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === thread.threadId && candidate.status === "pending")!;
    await owner.callTool({ name: "t3_pending_request_respond", arguments: { threadId: thread.threadId, requestId: request.id, answer: "main" } });
    await statusOf(owner, created.task.taskId, "completed");
    const result = await owner.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    const plain = await owner.callTool({ name: "t3_thread_wait", arguments: { threadId: thread.threadId, runId } });
    expect(result.structuredContent).toEqual(plain.structuredContent);
    expect(result.structuredContent).toMatchObject({ runId, status: "completed", terminal: true, waitTimedOut: false, result: "done on main" });
    // notifications/tasks/status on the creating session, ending with the terminal status.
    await pollUntil(() => notified, (seen) => seen.includes("completed"), "a completed notification");
    const told = [created.task.status, ...notified];
    expect(told).toContain("input_required");
    expect(told.filter((status, i) => status === told[i - 1])).toEqual([]);
    expect(told.at(-1)).toBe("completed");

    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    h = await h.restart();
    const after = await sdkClient(h.ownerToken);
    expect((await after.experimental.tasks.getTask(created.task.taskId)).status).toBe("completed");
    expect((await after.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)).structuredContent).toEqual(plain.structuredContent);
  });

  it("t3_thread_send: a retried call with the same clientRequestId is the same task, completed once the run it started ends", async () => {
    h = await start();
    const parent = await liveParent();
    const [idle] = (await h.owner.ok<{ threads: { threadId: string }[] }>("create_threads", { threads: [{ title: "Idle", target: { providerInstanceId: "a" } }] })).threads as [{ threadId: string }];
    const args = { threadId: idle.threadId, message: script({ say: "sent and done" }), clientRequestId: "send-1" };
    const created = await callAsTask(parent.client, "t3_thread_send", args);
    const retried = await callAsTask(parent.client, "t3_thread_send", args, { ttl: 1 });
    expect(retried.task.taskId).toBe(created.task.taskId);
    // The first call's ttl stands.
    expect(retried.task.ttl).toBe(600_000);
    expect(h.state.threadRuns.get(idle.threadId)).toHaveLength(1);
    await statusOf(parent.client, created.task.taskId, "completed");
    const result = await parent.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ threadId: idle.threadId, delivery: "started", runStatus: "completed" });
    // Only its creator and the owner see it.
    const other = await liveParent();
    expect((await refusal(other.client.experimental.tasks.getTask(created.task.taskId))).message).toContain("task_not_found");
    expect((await (await sdkClient(h.ownerToken)).experimental.tasks.getTask(created.task.taskId)).status).toBe("completed");
  });

  it("t3_background_wait: completed once the thread's tasks have their results, reporting the tasks unfinished at creation", async () => {
    h = await start();
    const parent = await liveParent();
    const delegated = await parent.client.callTool({ name: "delegate_task", arguments: { task: childScript({ sleep: 300 }, { say: "bg done" }), target: { providerInstanceId: "b" } } });
    expect(delegated.isError).not.toBe(true);
    const task = onlyTask(h, parent.threadId);
    const created = await callAsTask(parent.client, "t3_background_wait", {});
    expect(h.state.toolTasks.get(created.task.taskId)?.work).toEqual({ tool: "t3_background_wait", threadId: parent.threadId, taskIds: [task.taskId] });
    await statusOf(parent.client, created.task.taskId, "completed");
    const result = await parent.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ threadId: parent.threadId, settled: true, waitTimedOut: false, tasks: [{ taskId: task.taskId, summary: "bg done" }] });
  });

  it("tasks/cancel ends a wait and nothing it waits on", async () => {
    h = await start();
    const parent = await liveParent();
    const sleeper = await launchParent(h, [{ sleep: 120_000 }], "a", "Sleeper");
    await h.waitForRun(sleeper.runId, "running");
    const created = await callAsTask(parent.client, "t3_thread_wait", { threadId: sleeper.threadId });
    expect(created.task.status).toBe("working");
    const cancelled = await parent.client.experimental.tasks.cancelTask(created.task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(h.state.runs.get(sleeper.runId)?.status).toBe("running");
    const result = await parent.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ runId: sleeper.runId, status: "running", terminal: false, waitTimedOut: true });
    expect((await refusal(parent.client.experimental.tasks.cancelTask(created.task.taskId))).message).toContain("task_not_cancellable");
  });
});

describe("ttl and pollInterval", () => {
  it("clamps them to the bounds, keeps them with the task, and stops answering a task past its ttl", async () => {
    h = await start();
    const parent = await liveParent();
    const { ttlMs, pollIntervalMs } = TOOL_TASK_BOUNDS;
    // MCP 2025-11-25's request carries only ttl (the SDK sends nothing else): pollInterval is the server's own suggestion.
    const short = await callAsTask(parent.client, "delegate_task", { task: childScript({ say: "kept" }), target: { providerInstanceId: "b" } }, { ttl: 1 });
    expect([short.task.ttl, short.task.pollInterval]).toEqual([ttlMs.min, pollIntervalMs.default]);
    const long = await callAsTask(parent.client, "t3_thread_wait", { threadId: parent.threadId }, { ttl: 10 * ttlMs.max });
    expect([long.task.ttl, long.task.pollInterval]).toEqual([ttlMs.max, pollIntervalMs.default]);
    expect(h.state.toolTasks.get(long.task.taskId)).toMatchObject({ ttlMs: ttlMs.max, pollIntervalMs: pollIntervalMs.default });
    const unasked = await callAsTask(parent.client, "t3_background_wait", {}, {});
    expect([unasked.task.ttl, unasked.task.pollInterval]).toEqual([ttlMs.default, pollIntervalMs.default]);
    await waitForResult(h, short.task.taskId);
    expect((await parent.client.experimental.tasks.getTask(short.task.taskId)).ttl).toBe(ttlMs.min);

    skewMs = ttlMs.min;
    expect((await refusal(parent.client.experimental.tasks.getTask(short.task.taskId))).message).toContain("task_not_found");
    const listed = (await parent.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
    expect(listed).not.toContain(short.task.taskId);
    expect(listed).toContain(long.task.taskId);
    // The delegation itself stays: task_status still reads it.
    const status = await parent.client.callTool({ name: "task_status", arguments: { taskId: short.task.taskId } });
    expect(status.structuredContent).toMatchObject({ taskId: short.task.taskId, summary: "kept" });
  });

  it("refuses a negative or non-numeric ttl with -32602, writing nothing", async () => {
    h = await start();
    const parent = await liveParent();
    const sequence = h.state.lastSequence;
    const negative = await refusal(callAsTask(parent.client, "t3_thread_send", { threadId: parent.threadId, message: "hi" }, { ttl: -1 }));
    expect(negative.code).toBe(ErrorCode.InvalidParams);
    expect(negative.message).toContain("task.ttl");
    // A ttl that is not a number fails the SDK's own request schema, before Loom sees the call.
    const text = await refusal(callAsTask(parent.client, "t3_thread_send", { threadId: parent.threadId, message: "hi" }, { ttl: "soon" }));
    expect(text.message).toContain("ttl");
    const unknown = await refusal(callAsTask(parent.client, "t3_thread_wait", { threadId: "thread:none" }));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
    expect(unknown.message).toContain("thread_not_found");
    expect(h.state.lastSequence).toBe(sequence);
  });
});
