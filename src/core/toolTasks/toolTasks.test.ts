import { describe, expect, it } from "vitest";
import { type ToolTask, TOOL_TASK_BOUNDS } from "../../contracts/entities/toolTasks.js";
import { toolTaskEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { ROOT, ROOT_RUN, delegate, rootWithRun } from "../testing/delegationFixtures.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const thread = aProviderThread(A, "steerable");
const other = aProviderThread(B, "steerable");
const run = aRun(thread, { id: "run:a", messageId: "message:a" });
const base = [existing(thread), existing(other), runCreated(run)];
const { ttlMs: ttl, pollIntervalMs: poll } = TOOL_TASK_BOUNDS;

const create = (taskId: string, work: ToolTask["work"], ownerThreadId: string | null = B) =>
  cmd("tool-task.create", { taskId, ownerThreadId, work, ttlMs: ttl.min, pollIntervalMs: poll.default });

const waitTask: ToolTask = {
  taskId: "tool-task:w",
  ownerThreadId: B,
  work: { tool: "t3_thread_wait", threadId: A, runId: run.id },
  ttlMs: ttl.min,
  pollIntervalMs: poll.default,
  createdAt: NOW,
  expiresAt: new Date(Date.parse(NOW) + ttl.min).toISOString(),
  updatedAt: NOW,
  cancelledAt: null,
};

describe("tool-task.create", () => {
  it("records a wait's handle with what it waits on and when it expires", () => {
    const state = given(...base)
      .when(create(waitTask.taskId, waitTask.work))
      .then([toolTaskEvent(waitTask)]);
    expect(state.toolTasks.get(waitTask.taskId)).toEqual(waitTask);
  });

  it("writes nothing for a retried create of the same owner and tool, and refuses another owner's", () => {
    given(...base, toolTaskEvent(waitTask))
      .when(cmd("tool-task.create", { taskId: waitTask.taskId, ownerThreadId: B, work: waitTask.work, ttlMs: ttl.max, pollIntervalMs: poll.max }))
      .then([]);
    given(...base, toolTaskEvent(waitTask)).when(create(waitTask.taskId, waitTask.work, A)).thenRejects(RejectionCode.taskAlreadyExists);
  });

  it("refuses work that does not exist or is not the owner's", () => {
    given(...base).when(create("tool-task:x", { tool: "t3_thread_wait", threadId: "thread:none", runId: null })).thenRejects(RejectionCode.threadNotFound);
    given(...base).when(create("tool-task:x", { tool: "t3_thread_wait", threadId: B, runId: run.id })).thenRejects(RejectionCode.runNotFound);
    given(...base).when(create("task:none", { tool: "delegate_task" })).thenRejects(RejectionCode.taskNotFound);
    given(...base).when(create("workflow:none", { tool: "t3_workflow_start" })).thenRejects(RejectionCode.workflowNotFound);
    given(...base).when(create("tool-task:x", { tool: "t3_background_wait", threadId: A, taskIds: ["task:none"] })).thenRejects(RejectionCode.taskNotFound);
  });
});

describe("tool-task.cancel", () => {
  it("cancels a wait's handle once, touching nothing it waits on", () => {
    const ctx = testContext("2026-03-01T12:05:00.000Z");
    const state = given(...base, toolTaskEvent(waitTask))
      .when(cmd("tool-task.cancel", { taskId: waitTask.taskId }), ctx)
      .then([toolTaskEvent({ ...waitTask, cancelledAt: ctx.now, updatedAt: ctx.now })]);
    expect(state.runs.get(run.id)).toEqual(run);
    given(...base, toolTaskEvent({ ...waitTask, cancelledAt: NOW }))
      .when(cmd("tool-task.cancel", { taskId: waitTask.taskId }))
      .thenRejects(RejectionCode.taskNotCancellable);
  });

  it("refuses an unknown handle, and a delegation's (its own commands cancel it)", () => {
    given(...base).when(cmd("tool-task.cancel", { taskId: "tool-task:none" })).thenRejects(RejectionCode.taskNotFound);
    const handle: ToolTask = { ...waitTask, taskId: "task:d", work: { tool: "delegate_task" } };
    given(...base, toolTaskEvent(handle)).when(cmd("tool-task.cancel", { taskId: handle.taskId })).thenRejects(RejectionCode.taskNotCancellable);
  });
});

describe("delegated_task.request served as an MCP task", () => {
  it("records the task's handle in the delegation's own decision, last, owned by the parent thread", () => {
    const request = delegate("t1", ROOT, ROOT_RUN, { toolTask: { ttlMs: ttl.max, pollIntervalMs: poll.default } });
    const scenario = given(...rootWithRun()).when(request);
    if (scenario.decision.kind !== "accepted") throw new Error(`rejected: ${scenario.decision.rejection.code}`);
    const events = scenario.decision.events;
    const handle: ToolTask = {
      taskId: "subagent:t1",
      ownerThreadId: ROOT,
      work: { tool: "delegate_task" },
      ttlMs: ttl.max,
      pollIntervalMs: poll.default,
      createdAt: NOW,
      expiresAt: new Date(Date.parse(NOW) + ttl.max).toISOString(),
      updatedAt: NOW,
      cancelledAt: null,
    };
    expect(events.at(-1)).toEqual(toolTaskEvent(handle));
    expect(events.filter((event) => event.type === "tool-task.updated")).toHaveLength(1);
    expect(events.some((event) => event.type === "subagent.updated")).toBe(true);
  });

  it("records no handle for a plain delegation", () => {
    const scenario = given(...rootWithRun()).when(delegate("t1"));
    if (scenario.decision.kind !== "accepted") throw new Error(`rejected: ${scenario.decision.rejection.code}`);
    expect(scenario.decision.events.some((event) => event.type === "tool-task.updated")).toBe(false);
  });
});
