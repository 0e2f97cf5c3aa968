import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import { type AgentHarness, TURN_MS, dump, itemsOfRun, requireAgents, startAgentHarness } from "../testkit/agentHarness.js";
import type { ModelRule } from "../modelServer/rules.js";

/**
 * Cross-agent delegation with the real CLIs: a codex thread delegates to a
 * claude child and the other way round, through Loom's injected MCP server
 * (`delegate_task`, mode wait). One scripted model server answers both
 * agents; rules tell them apart by API. Pass or fail is read from Loom's
 * state, never from a CLI's exit code.
 */

const TASK = "What is 6 times 7? Answer with the number only.";

let h: AgentHarness;

beforeEach(async () => {
  h = await startAgentHarness();
});

afterEach(async () => {
  await h.close();
});

type Api = "responses" | "anthropic";
const API: Record<"codex" | "claude", Api> = { codex: "responses", claude: "anthropic" };

/**
 * The parent's model delegates TASK to `child` and waits; the child's model
 * answers 42; the parent's model quotes the tool result. `requireTools` keeps
 * Claude's bookkeeping requests out (its conversation always carries tools).
 */
function delegationRules(parent: "codex" | "claude", child: "codex" | "claude"): ModelRule[] {
  return [
    {
      when: { api: API[parent], requireTools: true, toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: "Delegate" },
      reply: { toolCall: { tool: "delegate_task", arguments: { task: TASK, target: { providerInstanceId: child }, mode: "wait", clientRequestId: "r1" } } },
      times: 1,
    },
    { when: { api: API[child], requireTools: true, lastUserIncludes: "6 times 7" }, reply: { text: "42" } },
    { when: { api: API[parent], requireTools: true, lastIsToolResult: true }, reply: { text: "The child answered: {{lastToolResult}}" } },
  ];
}

async function delegateAcross(parent: "codex" | "claude", child: "codex" | "claude"): Promise<void> {
  const { loom, model } = h;
  await requireAgents(loom, [parent, child]);
  model.setRules(delegationRules(parent, child));

  const launched = await loom.launch({ message: "Delegate the multiplication and report the answer.", title: `${parent} parent`, target: { providerInstanceId: parent } });
  const parentRunId = launched.runId!;
  expect(parentRunId).toBeTruthy();
  const run = await loom.waitForEnd(parentRunId, TURN_MS * 2);
  expect(run.status, dump(loom, launched.threadId)).toBe("completed");

  // The parent: its thread is the one asked for, and its run completed.
  const parentThread = loom.state.threads.get(launched.threadId)!;
  expect(parentThread).toMatchObject({ providerInstanceId: parent, lineage: { relation: "root" } });

  // One task, to one child thread on the other agent.
  const tasks = [...loom.state.tasks.values()].filter((task: DelegatedTask) => task.parentThreadId === launched.threadId);
  expect(tasks).toHaveLength(1);
  const task = tasks[0]!;
  expect(task).toMatchObject({ status: "completed", providerInstanceId: child, mode: "wait", clientRequestId: "r1", parentRunId });
  expect(task.summary).toContain("42");
  // The wait returned the result, so it was acknowledged rather than delivered as a notice.
  expect(task.completionDelivery).toBe("acknowledged");

  const childThread = loom.state.threads.get(task.childThreadId);
  expect(childThread).toMatchObject({ providerInstanceId: child, createdBy: "agent", lineage: { relation: "subagent", parentThreadId: launched.threadId } });
  const childRuns = loom.runs(task.childThreadId);
  expect(childRuns.map((r) => [r.kind, r.status]), dump(loom, task.childThreadId)).toEqual([["delegated_task", "completed"]]);

  // The child saw exactly the task, nothing of the parent's conversation, and answered 42.
  const childUserMessages = loom.items(task.childThreadId).flatMap((item) => (item.type === "user_message" ? [item.text] : []));
  expect(childUserMessages).toEqual([TASK]);
  expect(loom.assistantTexts(task.childThreadId)).toEqual(["42"]);

  // The parent's agent called delegate_task through Loom's MCP server and quoted the result.
  const parentItems = itemsOfRun(loom, launched.threadId, parentRunId);
  const call = parentItems.find((item) => item.type === "dynamic_tool" && item.toolName.endsWith("delegate_task"));
  expect(call, dump(loom, launched.threadId)).toMatchObject({ status: "completed" });
  const final = loom.assistantTexts(launched.threadId, parentRunId).at(-1) ?? "";
  expect(final).toMatch(/^The child answered: /);
  expect(final).toMatch(/"summary":\s*"42"/);
  expect(final).toContain(task.childThreadId);
  // No completion notice followed: the parent has exactly its one run.
  expect(loom.runs(launched.threadId)).toHaveLength(1);

  // Each agent talked to the model server under its own API.
  const parentRequests = model.requests.filter((r) => r.api === API[parent] && r.ruleIndex !== undefined);
  const childRequests = model.requests.filter((r) => r.api === API[child] && r.ruleIndex === 1);
  expect(parentRequests.map((r) => r.ruleIndex)).toEqual([0, 2]);
  expect(childRequests.length).toBeGreaterThanOrEqual(1);
}

describe("cross-agent delegation end to end", () => {
  it("a codex parent delegates to a claude child with delegate_task (wait) and reports its answer", () => delegateAcross("codex", "claude"), TURN_MS * 3);

  it("a claude parent delegates to a codex child with delegate_task (wait) and reports its answer", () => delegateAcross("claude", "codex"), TURN_MS * 3);
});
