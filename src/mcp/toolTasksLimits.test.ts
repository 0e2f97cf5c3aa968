import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { GetTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TOOL_TASK_BOUNDS } from "../contracts/entities/toolTasks.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../testkit/acpAgentHarness.js";
import { dump } from "../testkit/agentHarness.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { ManualClock } from "../testkit/manualClock.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * A task-augmented delegate_task and t3_thread_wait wait through a usage
 * limit as their plain calls do (docs/mcp.md, "Tasks through a usage
 * limit"): a real Loom server, the SDK's own client over Streamable HTTP, a
 * real ACP agent process (the scripted agent) whose first prompt fails on a
 * usage limit resetting in an hour, and a manual clock driving the limit
 * resumer. The tasks stay working while the limit holds and complete with
 * the resumed run's result, after a restart too.
 */

const HOUR = 3_600_000;
let agent: ScriptedAgentSetup;
let loom: LoomHarness;
let clock: ManualClock;
const clients: Client[] = [];

beforeEach(async () => {
  agent = scriptedAgentSetup();
  clock = new ManualClock(Date.now());
  const acp = agent.instance({ id: "acp", driver: "acp" });
  loom = await LoomHarness.start({
    config: { providers: [{ id: "acp", driver: "acp", options: acp.options }, { id: "scripted", driver: "scripted" }] },
    clock: clock.now,
    schedulerTimers: clock.timers,
  });
});

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await loom.close();
  agent.close();
});

async function sdkClient(token: string): Promise<Client> {
  const client = new Client({ name: "loom-limit-task-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(loom.server.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

/** A parent whose turn stays live, and a client with its provider session's own credential. */
async function liveParent(): Promise<{ threadId: string; client: Client }> {
  const parent = await loom.launch({ title: "parent", message: script({ sleep: 120_000 }), target: { providerInstanceId: "scripted" } });
  await loom.waitForRun((parent as { runId: string }).runId, "running");
  const session = [...loom.state.providerSessions.values()].find((candidate) => candidate.threadId === parent.threadId && candidate.releasedAt === null)!;
  const credential = await loom.server.credentials.issue({
    environmentId: loom.server.environmentId,
    threadId: parent.threadId,
    providerInstanceId: session.providerInstanceId,
    providerSessionId: session.id,
  });
  return { threadId: parent.threadId, client: await sdkClient(credential.token) };
}

/** Long enough to outlive the hour the manual clock skips. */
const task = { ttl: TOOL_TASK_BOUNDS.ttlMs.max };

function callAsTask(client: Client, name: string, args: Record<string, unknown>) {
  return client.request({ method: "tools/call", params: { name, arguments: args } }, CreateTaskResultSchema, { task });
}

function taskOf(client: Client, taskId: string, done: (task: GetTaskResult) => boolean, what: string): Promise<GetTaskResult> {
  return pollUntil(() => client.experimental.tasks.getTask(taskId), done, `task ${taskId} ${what}`, 20_000);
}

const resumedRuns = (threadId: string) => loom.runs(threadId).filter((run) => run.kind === "system_follow_up");

describe("MCP tasks through a usage limit", () => {
  it("delegate_task and t3_thread_wait stay working while the limit holds, then complete with the resumed run's result", async () => {
    const resetAt = new Date(clock.now() + HOUR).toISOString();
    const parent = await liveParent();
    const told: string[] = [];
    parent.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      told.push(notification.params.status);
    });
    const failing = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
    const delegated = await callAsTask(parent.client, "delegate_task", { task: failing, target: { providerInstanceId: "acp" } });
    const delegation = loom.state.tasks.get(delegated.task.taskId)!;
    await loom.until(() => loom.state.threads.get(delegation.childThreadId)?.limitRecovery, "the child's limit recovery", 20_000);
    const stoppedRunId = delegation.childRunId!;
    expect(loom.run(stoppedRunId).status).toBe("failed");

    const waitingText = `waiting for the limit to reset at ${resetAt.slice(11, 16)} UTC, resumes by itself`;
    const waitsOnLimit = (seen: GetTaskResult) => seen.statusMessage?.includes(waitingText) === true;
    const owner = await sdkClient(loom.ownerToken);
    const waited = await callAsTask(owner, "t3_thread_wait", { threadId: delegation.childThreadId });
    expect(loom.state.toolTasks.get(waited.task.taskId)?.work).toEqual({ tool: "t3_thread_wait", threadId: delegation.childThreadId, runId: stoppedRunId });
    for (const [client, taskId] of [[parent.client, delegated.task.taskId], [owner, waited.task.taskId]] as const) {
      const seen = await taskOf(client, taskId, waitsOnLimit, "waiting on the limit");
      expect(seen.status).toBe("working");
    }

    await loom.until(() => clock.armed >= 1, "the limit resumer to arm");
    clock.advance(HOUR);
    const [resumed] = await loom.until(() => (resumedRuns(delegation.childThreadId).length > 0 ? resumedRuns(delegation.childThreadId) : null), "the resumed run");
    expect(await loom.waitForEnd(resumed!.id, 20_000), dump(loom, delegation.childThreadId)).toMatchObject({ status: "completed" });

    const done = await taskOf(parent.client, delegated.task.taskId, (seen) => seen.status !== "working", "ended");
    expect(done.status).toBe("completed");
    const delegateResult = await parent.client.experimental.tasks.getTaskResult(delegated.task.taskId, CallToolResultSchema);
    expect(delegateResult.structuredContent).toMatchObject({ taskId: delegated.task.taskId, status: "completed", workState: "result_available", summary: expect.stringMatching(/^Echo: /) });
    // The session was told of no failure on the way: the first run's end on the limit is not the task's.
    await pollUntil(() => told, (seen) => seen.includes("completed"), "a completed notification");
    expect(told).toEqual(["completed"]);
    const waitedEnd = await taskOf(owner, waited.task.taskId, (seen) => seen.status !== "working", "ended");
    expect(waitedEnd.status).toBe("completed");
    const waitResult = await owner.experimental.tasks.getTaskResult(waited.task.taskId, CallToolResultSchema);
    expect(waitResult.structuredContent).toMatchObject({ threadId: delegation.childThreadId, runId: resumed!.id, status: "completed", terminal: true, waitTimedOut: false, error: null });

    // Read from the log after a restart, the wait still answers with the resumed run, not the stopped one.
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    loom = await loom.restart();
    const after = await sdkClient(loom.ownerToken);
    expect((await after.experimental.tasks.getTask(waited.task.taskId)).status).toBe("completed");
    expect((await after.experimental.tasks.getTaskResult(waited.task.taskId, CallToolResultSchema)).structuredContent).toEqual(waitResult.structuredContent);
  });

  it("a t3_thread_wait task on a run stopped with autoResume off completes with the stopped run's failure", async () => {
    await loom.close();
    const acp = agent.instance({ id: "acp", driver: "acp" });
    loom = await LoomHarness.start({
      config: { providers: [{ id: "acp", driver: "acp", options: acp.options, autoResume: false }, { id: "scripted", driver: "scripted" }] },
      clock: clock.now,
      schedulerTimers: clock.timers,
    });
    const resetAt = new Date(clock.now() + HOUR).toISOString();
    const thread = await loom.launch({ title: "limited", message: acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } }), target: { providerInstanceId: "acp" } });
    const runId = (thread as { runId: string }).runId;
    await loom.until(() => loom.state.threads.get(thread.threadId)?.limitRecovery, "the limit recovery", 20_000);
    const owner = await sdkClient(loom.ownerToken);
    const waited = await callAsTask(owner, "t3_thread_wait", { threadId: thread.threadId });
    const ended = await taskOf(owner, waited.task.taskId, (seen) => seen.status !== "working", "ended");
    expect(ended.status).toBe("completed");
    const result = await owner.experimental.tasks.getTaskResult(waited.task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ runId, status: "failed", terminal: true, waitTimedOut: false });
  });
});
