import { describe, expect, it } from "vitest";
import type { Workflow, WorkflowStep } from "../contracts/entities/workflows.js";
import { workflowEvent, workflowStepEvent } from "../contracts/events.js";
import { existing } from "../core/testing/fixtures.js";
import { aProviderThread } from "../core/testing/runFixtures.js";
import { TEST_NOW as NOW, fold } from "../core/testing/scenario.js";
import { shellRowOf } from "./projections.js";

/** A shell row's `workflow`: the newest running workflow of the thread, else its newest, with its steps counted. */

const A = "thread:a";
const thread = aProviderThread(A, "steerable");

function aWorkflow(workflowId: string, overrides: Partial<Workflow> = {}): Workflow {
  return {
    workflowId,
    parentThreadId: A,
    parentRunId: "run:1",
    itemId: `item:${workflowId}`,
    name: "review",
    description: null,
    script: "return 1",
    args: null,
    phases: [],
    currentPhase: null,
    status: "running",
    steps: [],
    error: null,
    budget: null,
    clientRequestId: null,
    stopReason: null,
    createdAt: NOW,
    updatedAt: NOW,
    endedAt: null,
    ...overrides,
  };
}

function aStep(index: number, status: WorkflowStep["status"]): WorkflowStep {
  return { stepId: `step:${index}`, index, callKey: `call-${index}`, label: null, phase: null, taskId: null, childThreadId: null, providerInstanceId: null, status, error: null, startedAt: NOW, endedAt: null };
}

describe("the shell row's workflow", () => {
  it("is null for a thread that never ran a workflow", () => {
    expect(shellRowOf(fold(existing(thread)), thread, {})?.workflow).toBeNull();
  });

  it("counts the ended steps of the running workflow, following each step as it is recorded", () => {
    const running = aWorkflow("workflow:1", { steps: [aStep(1, "completed"), aStep(2, "running")] });
    const state = fold(existing(thread), workflowEvent(running));
    expect(shellRowOf(state, thread, {})?.workflow).toEqual({ workflowId: "workflow:1", name: "review", status: "running", stepsDone: 1, stepsTotal: 2 });
    const later = fold(existing(thread), workflowEvent(running), workflowStepEvent(running, aStep(2, "failed"), NOW), workflowStepEvent(running, aStep(3, "running"), NOW));
    expect(shellRowOf(later, thread, {})?.workflow).toMatchObject({ stepsDone: 2, stepsTotal: 3 });
  });

  it("shows a running workflow before a newer ended one, and the newest when none runs", () => {
    const older = aWorkflow("workflow:old", { createdAt: "2026-01-01T00:00:00.000Z" });
    const newerEnded = aWorkflow("workflow:new", { status: "completed", createdAt: "2026-02-01T00:00:00.000Z" });
    expect(shellRowOf(fold(existing(thread), workflowEvent(older), workflowEvent(newerEnded)), thread, {})?.workflow?.workflowId).toBe("workflow:old");
    const bothEnded = fold(existing(thread), workflowEvent({ ...older, status: "stopped" }), workflowEvent(newerEnded));
    expect(shellRowOf(bothEnded, thread, {})?.workflow).toMatchObject({ workflowId: "workflow:new", status: "completed" });
  });
});
