import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { ModelRule } from "../modelServer/rules.js";
import { TURN_MS, dump, itemsOfRun, requireAgents } from "./agentHarness.js";
import type { AcpAgentHarness } from "./acpRealAgents.js";
import { AGENT_API, type RealAcpAgent } from "./acpRealAgents.js";
import { script } from "./loomHarness.js";

/**
 * The end-to-end scenarios every real ACP agent goes through under Loom's
 * `acp` driver, judged from Loom's recorded state (threads, runs, tasks,
 * turn items), never from an exit code:
 *
 *   1. the agent's model calls Loom's delegate_task (through the MCP server
 *      Loom injected in session/new); a scripted child answers; the answer
 *      comes back into the agent's turn;
 *   2. the agent is the delegated child of a scripted parent and answers;
 *   3. in approval-required mode the agent's permission request becomes a
 *      Loom approval, the owner accepts it, and the command runs.
 */

export { TURN_MS };

const CHILD_SCRIPT = script({ say: "42" });

/** 1. The agent delegates to the scripted instance and reports the child's answer. */
export async function agentDelegatesToScriptedChild(h: AcpAgentHarness, agent: RealAcpAgent): Promise<void> {
  const { loom, model } = h;
  await requireAgents(loom, [agent, "scripted"]);
  const api = AGENT_API[agent];
  const rules: ModelRule[] = [
    {
      when: { api, toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: "Delegate" },
      reply: { toolCall: { tool: "delegate_task", arguments: { task: CHILD_SCRIPT, target: { providerInstanceId: "scripted" }, mode: "wait", clientRequestId: "r1" } } },
      times: 1,
    },
    { when: { api, lastIsToolResult: true, anyMessageIncludes: "42" }, reply: { text: "The child answered: {{lastToolResult}}" } },
  ];
  model.setRules(rules);

  const launched = await loom.launch({ message: "Delegate the multiplication and report the answer.", title: `${agent} parent`, target: { providerInstanceId: agent } });
  const parentRunId = launched.runId!;
  const run = await loom.waitForEnd(parentRunId, TURN_MS * 2);
  expect(run.status, dump(loom, launched.threadId)).toBe("completed");
  expect(loom.state.threads.get(launched.threadId)).toMatchObject({ providerInstanceId: agent, lineage: { relation: "root" } });

  const tasks = [...loom.state.tasks.values()].filter((task: DelegatedTask) => task.parentThreadId === launched.threadId);
  expect(tasks, dump(loom, launched.threadId)).toHaveLength(1);
  const task = tasks[0]!;
  expect(task).toMatchObject({ status: "completed", providerInstanceId: "scripted", mode: "wait", clientRequestId: "r1", parentRunId, completionDelivery: "acknowledged" });
  expect(task.summary).toContain("42");
  expect(loom.state.threads.get(task.childThreadId)).toMatchObject({ providerInstanceId: "scripted", createdBy: "agent", lineage: { relation: "subagent", parentThreadId: launched.threadId } });
  expect(loom.runs(task.childThreadId).map((r) => [r.kind, r.status])).toEqual([["delegated_task", "completed"]]);
  expect(loom.assistantTexts(task.childThreadId)).toEqual(["42"]);

  // The agent's delegate_task call is in its run, and its last message quotes the result.
  const parentItems = itemsOfRun(loom, launched.threadId, parentRunId);
  const call = parentItems.find((item) => item.type === "dynamic_tool" && item.toolName.includes("delegate_task"));
  expect(call, dump(loom, launched.threadId)).toMatchObject({ status: "completed" });
  const final = loom.assistantTexts(launched.threadId, parentRunId).at(-1) ?? "";
  expect(final).toMatch(/The child answered: /);
  expect(final).toContain(task.childThreadId);
  expect(loom.runs(launched.threadId)).toHaveLength(1);
  // The model saw Loom's tools offered to the agent.
  const offered = model.requests.filter((request) => request.api === api).flatMap((request) => request.normalized?.tools ?? []);
  expect(offered.some((name) => name.endsWith("delegate_task"))).toBe(true);
}

/** 2. A scripted parent delegates to the agent, which answers the task. */
export async function agentAnswersAsDelegatedChild(h: AcpAgentHarness, agent: RealAcpAgent): Promise<void> {
  const { loom, model } = h;
  await requireAgents(loom, [agent]);
  const api = AGENT_API[agent];
  const TASK = "What is 6 times 7? Answer with the number only.";
  model.setRules([{ when: { api, lastUserIncludes: "6 times 7", lastIsToolResult: false }, reply: { text: "42" } }]);

  const parentScript = script(
    { call: "delegate_task", args: { task: TASK, target: { providerInstanceId: agent }, mode: "wait", clientRequestId: "c1", timeoutMs: TURN_MS }, as: "d" },
    { say: "child said {{d.summary}}" },
  );
  const launched = await loom.launch({ message: parentScript, title: `${agent} child`, target: { providerInstanceId: "scripted" } });
  const run = await loom.waitForEnd(launched.runId!, TURN_MS * 2);
  expect(run.status, dump(loom, launched.threadId)).toBe("completed");

  const tasks = [...loom.state.tasks.values()].filter((task: DelegatedTask) => task.parentThreadId === launched.threadId);
  expect(tasks, dump(loom, launched.threadId)).toHaveLength(1);
  const task = tasks[0]!;
  expect(task, dump(loom, task.childThreadId)).toMatchObject({ status: "completed", providerInstanceId: agent });
  expect(task.summary).toContain("42");
  expect(loom.state.threads.get(task.childThreadId)).toMatchObject({ providerInstanceId: agent, lineage: { relation: "subagent" } });
  const childUserMessages = loom.items(task.childThreadId).flatMap((item) => (item.type === "user_message" ? [item.text] : []));
  expect(childUserMessages).toEqual([TASK]);
  expect(loom.assistantTexts(task.childThreadId).join("")).toContain("42");
  expect(loom.assistantTexts(launched.threadId).at(-1)).toContain("child said 42");
}

/** 3. approval-required: the agent's permission request waits for the owner, who accepts; the command runs. */
export async function approvalRoutedThroughLoom(h: AcpAgentHarness, agent: RealAcpAgent, shellTool: { readonly tool: string; readonly arguments: Record<string, unknown> }): Promise<void> {
  const { loom, model } = h;
  await requireAgents(loom, [agent]);
  const api = AGENT_API[agent];
  model.setRules([
    { when: { api, lastIsToolResult: false, lastUserIncludes: "approved.txt" }, reply: { toolCall: shellTool }, times: 1 },
    { when: { api, lastIsToolResult: true }, reply: { text: "the command ran" } },
  ]);
  const launched = await loom.launch({ message: "Create approved.txt in the shell.", title: `${agent} approval`, target: { providerInstanceId: agent }, runtimeMode: "approval-required" });
  const runId = launched.runId!;
  await loom.waitForRun(runId, "waiting_on_approval", TURN_MS);
  const request = loom.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
  expect(request, dump(loom, launched.threadId)).toMatchObject({ type: "approval_request", status: "pending" });
  if (request?.type !== "approval_request") throw new Error("no approval request");
  expect(`${request.title}\n${request.detail ?? ""}`).toContain("approved.txt");
  // Nothing ran before the owner answered.
  expect(existsSync(join(loom.dir, "approved.txt"))).toBe(false);

  const answer = await loom.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const run = await loom.waitForEnd(runId, TURN_MS);
  expect(run.status, dump(loom, launched.threadId)).toBe("completed");
  expect(loom.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId)).toMatchObject({ status: "resolved", decision: "accept" });
  expect(existsSync(join(loom.dir, "approved.txt"))).toBe(true);
  expect(loom.assistantTexts(launched.threadId, runId).at(-1)).toBe("the command ran");
}
