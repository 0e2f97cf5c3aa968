import { describe, expect, it } from "vitest";
import type { Workflow } from "../../contracts/entities/workflows.js";
import { type DomainEvent, workflowEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";
import type { Decision } from "../decision.js";

/** The workflow journal's decisions (docs/workflows.md), given/when/then. */

const PARENT = aProviderThread("thread:parent");
const RUN = aRun(PARENT, { id: "run:parent", status: "running", startedAt: NOW });
const ENDED = aRun(PARENT, { id: "run:ended", ordinal: 0, status: "completed", startedAt: NOW, endedAt: NOW });
const WF = "workflow:1";
const base: DomainEvent[] = [existing(PARENT), runCreated(RUN)];

const start = (overrides: Record<string, unknown> = {}) =>
  cmd("workflow.start", {
    workflowId: WF,
    parentThreadId: PARENT.id,
    parentRunId: RUN.id,
    itemId: "turn-item:wf",
    name: "demo",
    description: null,
    phases: [{ title: "One" }],
    script: "return 1;",
    args: null,
    budget: null,
    clientRequestId: null,
    ...overrides,
  });
const stepStart = (stepId = "step:1") =>
  cmd("workflow.step.start", { workflowId: WF, stepId, callKey: `key ${stepId}`, label: "a", phase: "One", taskId: "subagent:1", childThreadId: "thread:child", providerInstanceId: "steerable" });

function workflowOf(decision: Decision): Workflow {
  if (decision.kind !== "accepted") throw new Error(`rejected: ${decision.rejection.code}`);
  const event = decision.events.find((candidate) => candidate.type === "workflow.updated");
  return (event as ReturnType<typeof workflowEvent>).data.workflow;
}

function started(...more: readonly Decision[]): DomainEvent[] {
  const history: DomainEvent[] = [...base, workflowEvent(workflowOf(given(...base).when(start()).decision))];
  for (const decision of more) history.push(workflowEvent(workflowOf(decision)));
  return history;
}

describe("workflow journal", () => {
  it("starts on a live run of the parent with its workflow item", () => {
    const decision = given(...base).when(start()).decision;
    expect(workflowOf(decision)).toMatchObject({ workflowId: WF, status: "running", steps: [], phases: [{ title: "One" }] });
    expect(decision.kind === "accepted" && decision.events.some((event) => event.type === "turn-item.updated")).toBe(true);
  });

  it("refuses a second start, an ended run and an unknown workflow", () => {
    given(...started()).when(start()).thenRejects(RejectionCode.workflowAlreadyExists);
    given(existing(PARENT), runCreated(ENDED)).when(start({ parentRunId: ENDED.id })).thenRejects(RejectionCode.parentNotActive);
    given(...base).when(stepStart()).thenRejects(RejectionCode.workflowNotFound);
  });

  it("journals a step once, finishes it once, then finishes the workflow", () => {
    const history = started();
    const withStep = given(...history).when(stepStart()).decision;
    expect(workflowOf(withStep).steps).toEqual([expect.objectContaining({ stepId: "step:1", index: 1, status: "running" })]);
    const afterStep = [...history, workflowEvent(workflowOf(withStep))];
    given(...afterStep).when(stepStart()).thenRejects(RejectionCode.workflowStepExists);
    const finish = cmd("workflow.step.finish", { workflowId: WF, stepId: "step:1", status: "completed", result: { ok: true }, error: null });
    const finished = given(...afterStep).when(finish).decision;
    expect(workflowOf(finished).steps[0]).toMatchObject({ status: "completed", result: { ok: true } });
    const afterFinish = [...afterStep, workflowEvent(workflowOf(finished))];
    given(...afterFinish).when(finish).thenRejects(RejectionCode.workflowStepFinished);
    const done = given(...afterFinish).when(cmd("workflow.finish", { workflowId: WF, status: "completed", result: 1, error: null, summary: "done", notify: false })).decision;
    expect(workflowOf(done)).toMatchObject({ status: "completed", result: 1, endedAt: NOW });
  });

  it("stop fails running steps and refuses later journal entries", () => {
    const history = started(given(...started()).when(stepStart()).decision);
    const stopped = given(...history).when(cmd("workflow.stop", { workflowId: WF, reason: "enough" })).decision;
    expect(workflowOf(stopped)).toMatchObject({ status: "stopped", stopReason: "enough", steps: [expect.objectContaining({ status: "failed", error: { code: "workflow_stopped", message: "enough" } })] });
    given(...history, workflowEvent(workflowOf(stopped))).when(stepStart("step:2")).thenRejects(RejectionCode.workflowNotRunning);
  });
});
