import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_CONTRACTS, type ToolName } from "../contracts/tools/toolContracts.js";
import { DELEGATION_PROVIDERS, childScript } from "../testkit/delegationHarness.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";

/**
 * Every tool's real structuredContent, from a real server over real MCP,
 * against the output schema its contract declares: parsing must succeed and
 * drop nothing (an undeclared field would be stripped, so the parse would
 * differ from what the tool sent).
 */

let h: LoomHarness;
const seen = new Set<ToolName>();

function check(name: ToolName, result: unknown): void {
  const parsed = TOOL_CONTRACTS[name].output.safeParse(result);
  expect(parsed.success, `${name}: ${parsed.success ? "" : parsed.error.message}`).toBe(true);
  expect(parsed.data, `${name} answered fields its output schema does not declare`).toEqual(result);
  seen.add(name);
}

async function owner(name: ToolName, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await h.owner.ok(name, args);
  check(name, result);
  return result;
}

function toolResults(threadId: string): Map<string, unknown[]> {
  const results = new Map<string, unknown[]>();
  for (const item of h.items(threadId)) {
    if (item.type !== "dynamic_tool" || item.status !== "completed") continue;
    const name = item.toolName;
    results.set(name, [...(results.get(name) ?? []), (item.result as { structuredContent?: unknown }).structuredContent]);
  }
  return results;
}

beforeAll(async () => {
  h = await LoomHarness.start({ config: { providers: DELEGATION_PROVIDERS }, diagnosticsTools: true });
});
afterAll(async () => {
  await h.close();
});

describe("tool outputs match their declared schemas", () => {
  it("tools/list advertises an outputSchema for every tool, admitting the failure envelope too", async () => {
    const listed = await h.owner.listTools();
    for (const tool of listed) {
      expect(tool.outputSchema, tool.name).toMatchObject({ type: "object" });
      // Each success shape (a dry run's estimate beside the real answer, for delegate_task and t3_workflow_start), then the failure envelope.
      const output = TOOL_CONTRACTS[tool.name as ToolName].output;
      expect((tool.outputSchema as { anyOf?: unknown[] }).anyOf).toHaveLength("options" in output ? output.options.length + 1 : 2);
    }
    expect(listed.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOL_CONTRACTS).sort());
  });

  it("thread tools, as the owner", async () => {
    check("loom_echo", await h.owner.ok("loom_echo", { text: "hi" }));
    await owner("orchestrator_capabilities", {});
    await owner("loom_tools", { query: "list threads", names: ["t3_thread_read"] });
    await owner("loom_tools", { call: { name: "t3_thread_list", arguments: { limit: 1 } } });
    const created = await owner("create_threads", { threads: [{ title: "idle" }, { prompt: script({ say: "one" }) }] });
    const [idle, busy] = created.threads as { threadId: string; runId: string | null }[];
    await h.waitForEnd(busy!.runId!);
    const launched = await owner("t3_thread_launch", { message: script({ ask: "Which colour?" }), target: { providerInstanceId: "a" } });
    const askingThread = launched.threadId as string;
    await h.waitForRun(launched.runId as string, "waiting_on_user_input");
    await owner("t3_thread_list", {});
    await owner("t3_thread_read", { threadId: busy!.threadId });
    await owner("t3_thread_read", { threadId: busy!.threadId, view: "activity", afterPosition: -1 });
    await owner("t3_thread_update", { threadId: idle!.threadId, action: "rename", title: "Renamed" });
    await owner("link_pull_request", { threadId: idle!.threadId, url: "https://example.com/pr/1", number: 1 });
    await owner("unlink_pull_request", { threadId: idle!.threadId });
    const listed = await owner("t3_pending_request_list", { threadId: askingThread });
    const requestId = (listed.requests as { requestId: string }[])[0]!.requestId;
    await owner("t3_pending_request_read", { threadId: askingThread, requestId });
    await owner("t3_pending_request_respond", { threadId: askingThread, requestId, answer: "blue" });
    await owner("t3_thread_wait", { threadId: askingThread });
    const sent = await owner("t3_thread_send", { threadId: idle!.threadId, message: script({ sleep: 60_000 }) });
    await h.waitForRun(sent.runId as string, "running");
    await owner("t3_thread_interrupt", { threadId: idle!.threadId });
    await owner("t3_thread_interrupt", { threadId: busy!.threadId });
  });

  it("delegation tools, as an agent", async () => {
    const child = childScript({ say: "child done" });
    const parent = await h.launch({
      target: { providerInstanceId: "a" },
      message: script(
        { call: "delegate_task", args: { task: child, target: { providerInstanceId: "b" }, mode: "wait" }, as: "d" },
        { call: "task_status", args: { taskId: "{{d.taskId}}" } },
        { call: "task_cancel", args: { taskId: "{{d.taskId}}" } },
        { call: "delegate_task", args: { task: child, target: { providerInstanceId: "b" }, dryRun: true } },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const results = toolResults(parent.threadId);
    for (const name of ["task_status", "task_cancel"] as const) {
      const answers = results.get(name) ?? [];
      expect(answers, `${name} answered`).toHaveLength(1);
      check(name, answers[0]);
    }
    // The task, then the dry run's estimate: both shapes of the one output schema.
    const delegated = results.get("delegate_task") ?? [];
    expect(delegated).toHaveLength(2);
    for (const answer of delegated) check("delegate_task", answer);
    expect(delegated[1]).toMatchObject({ dryRun: true, agentCalls: 1 });
  });

  it("thread control tools: queue, organize, configuration, fork, merge back and transfers, as the owner", async () => {
    const rigid = await h.launch({ message: script({ sleep: 60_000 }), target: { providerInstanceId: "rigid" } });
    await h.waitForRun(rigid.runId!, "running");
    const queued: string[] = [];
    for (const message of ["q1", "q2", "q3"]) queued.push(((await owner("t3_thread_send", { threadId: rigid.threadId, message, mode: "queue" })) as { runId: string }).runId);
    await owner("t3_queue_list", { threadId: rigid.threadId });
    await owner("t3_queue_read", { threadId: rigid.threadId, runId: queued[0] });
    await owner("t3_queue_edit", { threadId: rigid.threadId, runId: queued[0], message: "q1 edited" });
    await owner("t3_queue_reorder", { threadId: rigid.threadId, runIds: [queued[2], queued[0], queued[1]] });
    await owner("t3_queue_cancel", { threadId: rigid.threadId, runId: queued[1] });
    const steerable = await h.launch({ message: script({ sleep: 60_000 }), target: { providerInstanceId: "a" } });
    await h.waitForRun(steerable.runId!, "running");
    const toSteer = (await owner("t3_thread_send", { threadId: steerable.threadId, message: "steer", mode: "queue" })) as { runId: string };
    await owner("t3_queue_promote_to_steer", { threadId: steerable.threadId, runId: toSteer.runId });

    const source = await h.launch({ message: "hello", target: { providerInstanceId: "a" } });
    await h.waitForEnd(source.runId!);
    await owner("t3_thread_organize", { threadId: source.threadId, action: "pin" });
    await owner("t3_thread_configuration", { threadId: source.threadId });
    const fork = (await owner("t3_thread_fork", { threadId: source.threadId, target: { providerInstanceId: "b" }, message: "forked" })) as { threadId: string; runId: string };
    await h.waitForEnd(fork.runId);
    await owner("t3_thread_merge_back", { threadId: fork.threadId });
    await owner("t3_thread_configure", { threadId: source.threadId, providerInstanceId: "b", runtimeMode: "auto-accept-edits" });
    await owner("t3_thread_transfers", { threadId: source.threadId, includeText: true });
    await owner("t3_merge_queue", { threadId: source.threadId });
    await owner("t3_merge_queue", {});
  });

  it("search, background wait and secret tools", async () => {
    await owner("orchestrator_capabilities", { search: "scripted" });
    const child = childScript({ say: "child done" });
    const parent = await h.launch({
      target: { providerInstanceId: "a" },
      message: script(
        { call: "delegate_task", args: { task: child, target: { providerInstanceId: "b" } }, as: "d" },
        { call: "t3_background_wait", args: {}, as: "w" },
        { call: "request_secret", args: { secretName: "Token", envVarName: "SOME_TOKEN", description: "to test" }, as: "s" },
        { call: "t3_thread_search", args: { query: "child done" }, as: "q" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const results = toolResults(parent.threadId);
    for (const name of ["t3_background_wait", "request_secret", "t3_thread_search"] as const) {
      const answers = results.get(name) ?? [];
      expect(answers, `${name} answered`).toHaveLength(1);
      check(name, answers[0]);
    }
    await owner("t3_background_wait", { threadId: parent.threadId });
    const found = await owner("t3_thread_search", { query: "child done", threadId: parent.threadId });
    expect((found.hits as unknown[]).length).toBeGreaterThan(0);
  });

  it("scheduled-task tools, as the owner", async () => {
    const task = await owner("schedule_task", { prompt: script({ say: "scheduled" }), trigger: { type: "daily", at: "03:00" }, target: { providerInstanceId: "a" } });
    const scheduledTaskId = task.scheduledTaskId as string;
    await owner("update_scheduled_task", { scheduledTaskId, enabled: false });
    await owner("schedule_task", { scheduledTaskId, enabled: true });
    await owner("list_scheduled_tasks", {});
    const fired = await owner("run_scheduled_task_now", { scheduledTaskId });
    await h.waitForEnd(fired.runId as string);
    const listed = await owner("list_scheduled_tasks", {});
    expect((listed.tasks as { lastFire: { status: string } }[])[0]!.lastFire.status).toBe("completed");
    await owner("schedule_task", { prompt: "on a hook", trigger: { type: "webhook", signature: { secret: "s".repeat(32) }, filters: [{ path: "action", equals: "opened" }], dedupeKey: "header:X-Delivery" } });
    await owner("delete_scheduled_task", { scheduledTaskId });
  });

  it("workflow tools", async () => {
    const workflowScript = `phase("One"); return await agent(${JSON.stringify(childScript({ say: "w" }))}, { label: "one" });`;
    const parent = await h.launch({
      target: { providerInstanceId: "a" },
      message: script(
        { call: "t3_workflow_start", args: { script: workflowScript, dryRun: true } },
        { call: "t3_workflow_start", args: { script: workflowScript, mode: "wait", budget: { spawns: 5 } }, as: "w" },
        { say: "done" },
      ),
    });
    await h.waitForEnd(parent.runId!, 20_000);
    const [estimate, started] = toolResults(parent.threadId).get("t3_workflow_start") ?? [];
    check("t3_workflow_start", estimate);
    expect(estimate).toMatchObject({ dryRun: true, agentCalls: 1, rounds: 1 });
    check("t3_workflow_start", started);
    const workflowId = (started as { workflowId: string }).workflowId;
    await owner("t3_workflow_status", { workflowId });
    await owner("t3_workflow_stop", { workflowId, reason: "already done" });
    const raised = await owner("t3_budget_raise", { workflowId, limits: { spawns: 6 } });
    expect(raised).toMatchObject({ holder: { kind: "workflow", id: workflowId }, limits: { spawns: 6 } });
  });

  it("covered every tool of the contract table", () => {
    expect([...seen].sort()).toEqual(Object.keys(TOOL_CONTRACTS).sort());
  });
});
