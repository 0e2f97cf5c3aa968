import { describe, expect, it } from "vitest";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
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

/** The workflow journal's events of a decision: the whole record, or one step. */
function journalOf(decision: Decision): DomainEvent[] {
  if (decision.kind !== "accepted") throw new Error(`rejected: ${decision.rejection.code}`);
  return decision.events.filter((candidate) => candidate.type === "workflow.updated" || candidate.type === "workflow.step.updated");
}

/** The workflow as the decision leaves it, folded from its journal events (no history needed for a start). */
function workflowOf(decision: Decision, history: readonly DomainEvent[] = []): Workflow {
  return fold(...history, ...journalOf(decision)).workflows.get(WF)!;
}

function started(...more: readonly Decision[]): DomainEvent[] {
  const history: DomainEvent[] = [...base, ...journalOf(given(...base).when(start()).decision)];
  for (const decision of more) history.push(...journalOf(decision));
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
    // A step is journaled alone, not as a rewrite of the whole workflow.
    expect(journalOf(withStep).map((event) => event.type)).toEqual(["workflow.step.updated"]);
    expect(workflowOf(withStep, history).steps).toEqual([expect.objectContaining({ stepId: "step:1", index: 1, status: "running" })]);
    const afterStep = [...history, ...journalOf(withStep)];
    given(...afterStep).when(stepStart()).thenRejects(RejectionCode.workflowStepExists);
    const finish = cmd("workflow.step.finish", { workflowId: WF, stepId: "step:1", status: "completed", result: { ok: true }, error: null });
    const finished = given(...afterStep).when(finish).decision;
    expect(journalOf(finished).map((event) => event.type)).toEqual(["workflow.step.updated"]);
    expect(workflowOf(finished, afterStep).steps[0]).toMatchObject({ status: "completed", result: { ok: true } });
    // While running, the parent's item carries the counts and the running steps only, so its size does not grow with the journal.
    const itemOf = (decision: Decision) => (decision.kind === "accepted" ? decision.events.find((event) => event.type === "turn-item.updated") : undefined) as { data: { item: { result: unknown } } } | undefined;
    expect(itemOf(withStep)!.data.item.result).toMatchObject({ stepCounts: { total: 1, running: 1, completed: 0, failed: 0 }, steps: [expect.objectContaining({ index: 1, status: "running" })] });
    expect(itemOf(finished)!.data.item.result).toMatchObject({ stepCounts: { total: 1, running: 0, completed: 1, failed: 0 }, steps: [] });
    const afterFinish = [...afterStep, ...journalOf(finished)];
    given(...afterFinish).when(finish).thenRejects(RejectionCode.workflowStepFinished);
    const done = given(...afterFinish).when(cmd("workflow.finish", { workflowId: WF, status: "completed", result: 1, error: null, summary: "done", notify: false })).decision;
    expect(workflowOf(done, afterFinish)).toMatchObject({ status: "completed", result: 1, endedAt: NOW, steps: [expect.objectContaining({ status: "completed" })] });
    expect(itemOf(done)!.data.item.result).toMatchObject({ status: "completed", steps: [expect.objectContaining({ index: 1, status: "completed" })] });
  });

  it("stop fails running steps and refuses later journal entries", () => {
    const history = started(given(...started()).when(stepStart()).decision);
    const stopped = given(...history).when(cmd("workflow.stop", { workflowId: WF, reason: "enough" })).decision;
    expect(workflowOf(stopped, history)).toMatchObject({ status: "stopped", stopReason: "enough", steps: [expect.objectContaining({ status: "failed", error: { code: "workflow_stopped", message: "enough" } })] });
    given(...history, ...journalOf(stopped)).when(stepStart("step:2")).thenRejects(RejectionCode.workflowNotRunning);
  });
});
