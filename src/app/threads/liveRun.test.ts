import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_ACCESS } from "../access.js";
import { TOOL_CONTRACTS, type ToolName } from "../../contracts/tools/toolContracts.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";

/**
 * Writes need a live run (spec 000, Policy): an agent credential whose run has
 * ended may still read, but every tool that creates or changes state is
 * refused with parent_not_active and writes nothing, until the credential's
 * session is released and the token stops working altogether.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ diagnosticsTools: true });
});
afterAll(async () => {
  await h.close();
});

/** A thread whose one run has ended, and a credential of it, as its agent kept it. */
async function endedAgent(title: string): Promise<{ threadId: string; agent: LoomMcpClient }> {
  const { threadId, runId } = await h.createThread({ title, prompt: script({ say: "done" }) });
  expect((await h.waitForEnd(runId!)).status).toBe("completed");
  const credential = await h.server.credentials.issue({
    environmentId: h.server.environmentId,
    threadId,
    providerInstanceId: "scripted",
    providerSessionId: `provider-session:ended:${crypto.randomUUID()}`,
  });
  return { threadId, agent: await h.connect(credential.token, title) };
}

describe("an agent whose run has ended", () => {
  it("cannot launch or create threads: parent_not_active, and nothing is created", async () => {
    const { agent } = await endedAgent("Ended launcher");
    const before = h.state.lastSequence;
    const threads = h.state.threads.size;
    const launch = await agent.call("t3_thread_launch", { message: script({ say: "should not run" }), title: "Late launch" });
    const create = await agent.call("create_threads", { threads: [{ title: "Late batch", prompt: script({ say: "should not run" }) }] });
    expect([launch.errorCode, create.errorCode]).toEqual(["parent_not_active", "parent_not_active"]);
    expect(launch.errorMessage).toContain("needs a live run");
    expect(h.state.lastSequence).toBe(before);
    expect(h.state.threads.size).toBe(threads);
  });

  it("is refused every write tool and allowed every read tool", async () => {
    const { threadId, agent } = await endedAgent("Ended caller");
    const other = await h.createThread({ title: "Someone else" });
    const args: { readonly [N in ToolName]: Record<string, unknown> } = {
      orchestrator_capabilities: {},
      create_threads: { threads: [{ title: "x" }] },
      t3_thread_launch: { message: "x" },
      t3_thread_list: {},
      t3_thread_read: { threadId },
      t3_thread_update: { action: "rename", title: "Renamed" },
      link_pull_request: { url: "https://example.com/pr/9" },
      unlink_pull_request: { url: "https://example.com/pr/9" },
      t3_thread_send: { threadId: other.threadId, message: "hi" },
      t3_thread_wait: { threadId, timeoutMs: 0 },
      t3_thread_interrupt: { threadId: other.threadId },
      delegate_task: { task: "x" },
      task_status: { taskId: "subagent:none" },
      task_cancel: { taskId: "subagent:none" },
      t3_pending_request_list: { threadId },
      t3_pending_request_read: { threadId, requestId: "request:none" },
      t3_pending_request_respond: { threadId, requestId: "request:none", dismiss: true },
      t3_queue_list: { threadId },
      t3_queue_read: { threadId, runId: "run:none" },
      t3_queue_edit: { threadId, runId: "run:none", message: "x" },
      t3_queue_cancel: { threadId, runId: "run:none" },
      t3_queue_reorder: { threadId, runIds: [] },
      t3_queue_promote_to_steer: { threadId, runId: "run:none" },
      t3_thread_organize: { action: "settle" },
      t3_thread_configuration: {},
      t3_thread_configure: { interactionMode: "plan" },
      t3_thread_fork: { threadId },
      t3_thread_merge_back: {},
      t3_thread_transfers: { threadId },
      t3_merge_queue: { threadId },
      t3_thread_search: { query: "x" },
      t3_background_wait: { threadId },
      request_secret: { secretName: "Token", envVarName: "SOME_TOKEN", description: "x" },
      schedule_task: { prompt: "audit", trigger: { type: "interval", everyMs: 3_600_000 } },
      list_scheduled_tasks: {},
      update_scheduled_task: { scheduledTaskId: "scheduled-task:none", enabled: false },
      delete_scheduled_task: { scheduledTaskId: "scheduled-task:none" },
      run_scheduled_task_now: { scheduledTaskId: "scheduled-task:none" },
      t3_workflow_start: { script: "return 1;" },
      t3_workflow_status: { workflowId: "workflow:none" },
      t3_workflow_stop: { workflowId: "workflow:none" },
      t3_budget_raise: { taskId: "subagent:none", limits: { tokens: 1000 } },
      loom_echo: { text: "hi" },
      loom_tools: { query: "thread" },
    };
    const before = h.state.lastSequence;
    const outcomes: Record<string, string> = {};
    for (const tool of Object.keys(TOOL_CONTRACTS) as ToolName[]) {
      const outcome = await agent.call(tool, args[tool]);
      outcomes[tool] = outcome.errorCode ?? "ok";
    }
    const expected = Object.fromEntries(
      (Object.keys(TOOL_CONTRACTS) as ToolName[]).map((tool) => [tool, TOOL_ACCESS[tool] === "write" ? "parent_not_active" : outcomes[tool]]),
    );
    expect(outcomes).toEqual(expected);
    // Reads answer (or fail for their own reasons), never parent_not_active.
    for (const tool of Object.keys(TOOL_ACCESS) as ToolName[]) if (TOOL_ACCESS[tool] === "read") expect(outcomes[tool]).not.toBe("parent_not_active");
    expect(["orchestrator_capabilities", "t3_thread_list", "t3_thread_read", "t3_thread_wait", "t3_pending_request_list", "loom_echo"].map((tool) => outcomes[tool])).toEqual(["ok", "ok", "ok", "ok", "ok", "ok"]);
    expect(h.state.lastSequence).toBe(before);
  });

  it("is refused a write tool called through loom_tools, as if called directly", async () => {
    const { agent } = await endedAgent("Ended caller, through loom_tools");
    const before = h.state.lastSequence;
    const through = await agent.call("loom_tools", { call: { name: "create_threads", arguments: { threads: [{ title: "x" }] } } });
    expect(through.errorCode).toBe("parent_not_active");
    expect(h.state.lastSequence).toBe(before);
  });

  it("tools/list marks exactly the read tools readOnlyHint", async () => {
    const tools = await h.owner.listTools();
    const hints = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint === true]));
    // loom_tools reads, but a call through it may write, so it claims no readOnlyHint.
    expect(hints).toEqual(Object.fromEntries((Object.keys(TOOL_ACCESS) as ToolName[]).map((tool) => [tool, TOOL_ACCESS[tool] === "read" && tool !== "loom_tools"])));
  });
});

describe("an agent during its run", () => {
  it("writes through its own credential (revocation on release: auth.test.ts)", async () => {
    const parent = await h.createThread({
      title: "Live writer",
      prompt: script({ call: "create_threads", args: { threads: [{ title: "Made while live" }] }, as: "made" }, { say: "{{made.threads.0.title}}" }),
    });
    expect((await h.waitForEnd(parent.runId!)).status).toBe("completed");
    expect(h.assistantTexts(parent.threadId)).toEqual(["Made while live"]);
  });
});
