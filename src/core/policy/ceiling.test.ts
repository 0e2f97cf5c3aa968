import { describe, expect, it } from "vitest";
import type { Command } from "../../contracts/commands.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { Ceiling } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { ROOT, ROOT_RUN, delegate, rootWithRun, setupContext, startWorkflow, steps, turnEnds } from "../testing/delegationFixtures.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
import { fire, save } from "../testing/scheduleFixtures.js";

/**
 * The privilege ceiling (DESIGN invariant 9; spec 000, Policy And
 * Idempotency), given/when/then on the decider: every path that starts or
 * reconfigures work, within and beyond the caller's modes, and the owner.
 */

/** An approval-required, plan-mode caller with a running turn. */
const CAREFUL = aProviderThread("thread:careful", "steerable", { runtimeMode: "approval-required", interactionMode: "plan" });
/** A thread as narrow as the caller. */
const NARROW = aProviderThread("thread:narrow", "steerable", { runtimeMode: "approval-required", interactionMode: "plan" });
/** A full-access, default-mode thread: broader than the caller in both modes. */
const WIDE = aProviderThread("thread:wide");
const base: DomainEvent[] = [existing(CAREFUL), runCreated(aRun(CAREFUL, { id: "run:careful" })), existing(NARROW), existing(WIDE)];
const careful: Ceiling = { callerThreadId: CAREFUL.id };

function accepts(history: readonly DomainEvent[], command: Command): DomainEvent[] {
  return given(...history).when(command).thenHistory();
}

function refuses(history: readonly DomainEvent[], command: Command, code: RejectionCode): string {
  return given(...history).when(command).thenRejects(code).message;
}

/** Delegation has no owner case: its ceiling is always the parent thread, whoever asks. */
describe("the privilege ceiling: delegation (delegate_task)", () => {
  const parent = rootWithRun("steerable", { runtimeMode: "auto-accept-edits", interactionMode: "plan" });

  it("refuses a child broader than its parent in either mode, saying which mode is broader than which", () => {
    expect(refuses(parent, delegate("t1", ROOT, ROOT_RUN, { runtimeMode: "full-access", interactionMode: "plan" }), RejectionCode.runtimeModeEscalationDenied)).toBe(
      "runtime mode full-access of the child thread thread:t1 is broader than the calling thread thread:root's auto-accept-edits",
    );
    expect(refuses(parent, delegate("t1", ROOT, ROOT_RUN, { runtimeMode: "auto-accept-edits", interactionMode: "default" }), RejectionCode.interactionModeEscalationDenied)).toBe(
      "interaction mode default of the child thread thread:t1 is broader than the calling thread thread:root's plan",
    );
  });

  it("accepts a child with the parent's modes or narrower ones", () => {
    for (const runtimeMode of ["auto-accept-edits", "approval-required"] as const) {
      const history = accepts(parent, delegate("t1", ROOT, ROOT_RUN, { runtimeMode, interactionMode: "plan" }));
      expect(fold(...history).threads.get("thread:t1")).toMatchObject({ runtimeMode, interactionMode: "plan" });
    }
  });

  it("reads the parent's modes from the state at decision time, not from the command's copy", () => {
    // The command carries the modes the parent had when the request was built; the parent was narrowed since.
    const narrowed = steps(parent, [cmd("thread.runtime-mode.set", { threadId: ROOT, runtimeMode: "approval-required" })], setupContext());
    refuses(narrowed, delegate("t1", ROOT, ROOT_RUN, { runtimeMode: "auto-accept-edits", interactionMode: "plan" }), RejectionCode.runtimeModeEscalationDenied);
  });
});

describe("the privilege ceiling: a workflow's agent()", () => {
  const workflowStep = { workflowId: "workflow:1", stepId: "workflow-step:1" };
  // The workflow started on the parent's run; the parent was narrowed and its run ended while the script runs on.
  const running = steps(
    rootWithRun(),
    [
      startWorkflow(workflowStep.workflowId),
      cmd("thread.runtime-mode.set", { threadId: ROOT, runtimeMode: "approval-required" }),
      turnEnds(ROOT, ROOT_RUN),
    ],
    setupContext(),
  );

  it("refuses an agent() task with the modes the parent had when the workflow started", () => {
    refuses(running, delegate("a1", ROOT, ROOT_RUN, { workflowStep, wakePolicy: "never", runtimeMode: "full-access" }), RejectionCode.runtimeModeEscalationDenied);
  });

  it("accepts one within the parent's current modes", () => {
    accepts(running, delegate("a1", ROOT, ROOT_RUN, { workflowStep, wakePolicy: "never", runtimeMode: "approval-required" }));
  });
});

describe("the privilege ceiling: send (t3_thread_send)", () => {
  const send = (threadId: string, ceiling?: Ceiling) => cmd("message.dispatch", { threadId, text: "hello", ...(ceiling === undefined ? {} : { ceiling }) });

  it("refuses a message into a thread broader than the caller", () => {
    expect(refuses(base, send(WIDE.id, careful), RejectionCode.runtimeModeEscalationDenied)).toBe(
      "runtime mode full-access of thread thread:wide is broader than the calling thread thread:careful's approval-required",
    );
  });

  it("refuses by interaction mode alone", () => {
    const planner = aProviderThread("thread:planner", "steerable", { interactionMode: "plan" });
    refuses([...base, existing(planner)], send(WIDE.id, { callerThreadId: planner.id }), RejectionCode.interactionModeEscalationDenied);
  });

  it("accepts a message into the caller's own thread or one no broader", () => {
    accepts(base, send(CAREFUL.id, careful));
    accepts(base, send(NARROW.id, careful));
  });

  it("puts no ceiling on the owner: none, or no ceiling at all", () => {
    accepts(base, send(WIDE.id, "none"));
    accepts(base, send(WIDE.id));
  });

  it("refuses a caller that no longer exists", () => {
    refuses(base, send(NARROW.id, { callerThreadId: "thread:gone" }), RejectionCode.threadNotFound);
    const deleted: AppThread = { ...CAREFUL, deletedAt: NOW };
    refuses([...base, existing(deleted)], send(NARROW.id, careful), RejectionCode.threadDeleted);
  });
});

describe("the privilege ceiling: configure (t3_thread_configure)", () => {
  const editor = aProviderThread("thread:editor", "steerable", { runtimeMode: "auto-accept-edits", interactionMode: "plan" });
  const history = [...base, existing(editor)];
  const ceiling: Ceiling = { callerThreadId: editor.id };

  it("lets a caller narrow its own thread but never widen it", () => {
    accepts(history, cmd("thread.runtime-mode.set", { threadId: editor.id, runtimeMode: "approval-required", ceiling }));
    expect(refuses(history, cmd("thread.runtime-mode.set", { threadId: editor.id, runtimeMode: "full-access", ceiling }), RejectionCode.runtimeModeEscalationDenied)).toBe(
      "runtime mode full-access of thread thread:editor after the change is broader than the calling thread thread:editor's auto-accept-edits",
    );
    refuses(history, cmd("thread.interaction-mode.set", { threadId: editor.id, interactionMode: "default", ceiling }), RejectionCode.interactionModeEscalationDenied);
  });

  it("refuses any change to a broader thread, narrowing it included", () => {
    refuses(history, cmd("thread.runtime-mode.set", { threadId: WIDE.id, runtimeMode: "approval-required", ceiling }), RejectionCode.runtimeModeEscalationDenied);
    refuses(history, cmd("provider.switch", { threadId: WIDE.id, providerInstanceId: "plain", ceiling }), RejectionCode.runtimeModeEscalationDenied);
    refuses(history, cmd("thread.model-selection.set", { threadId: WIDE.id, modelSelection: { providerInstanceId: "steerable", model: "m2" }, ceiling }), RejectionCode.runtimeModeEscalationDenied);
  });

  it("lets the owner widen any thread", () => {
    accepts(history, cmd("thread.runtime-mode.set", { threadId: editor.id, runtimeMode: "full-access", ceiling: "none" }));
    accepts(history, cmd("thread.interaction-mode.set", { threadId: editor.id, interactionMode: "default" }));
  });
});

describe("the privilege ceiling: launch and create_threads (thread.create)", () => {
  const create = (fields: Partial<Extract<Command, { type: "thread.create" }>["data"]>) => cmd("thread.create", { threadId: "thread:new", projectId: "project:1", ...fields });

  it("refuses a new thread broader than the caller, explicit or by the defaults (full-access, default)", () => {
    expect(refuses(base, create({ runtimeMode: "full-access", interactionMode: "plan", ceiling: careful }), RejectionCode.runtimeModeEscalationDenied)).toContain(
      "of the new thread thread:new is broader than the calling thread thread:careful's approval-required",
    );
    refuses(base, create({ runtimeMode: "approval-required", interactionMode: "default", ceiling: careful }), RejectionCode.interactionModeEscalationDenied);
    refuses(base, create({ ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
  });

  it("accepts one within the caller's modes, and any for the owner", () => {
    accepts(base, create({ runtimeMode: "approval-required", interactionMode: "plan", ceiling: careful }));
    accepts(base, create({ ceiling: "none" }));
  });
});

describe("the privilege ceiling: fork (t3_thread_fork)", () => {
  const fork = (runtimeMode: "approval-required" | "full-access") =>
    cmd("thread.fork", { sourceThreadId: WIDE.id, threadId: "thread:fork", providerInstanceId: "steerable", model: "m1", runtimeMode, interactionMode: "plan", ceiling: careful });

  it("bounds the fork by the caller, not by its source: a broad source forks narrow, never broad", () => {
    accepts(base, fork("approval-required"));
    expect(refuses(base, fork("full-access"), RejectionCode.runtimeModeEscalationDenied)).toContain("of the fork thread:fork is broader than");
  });

  it("lets the owner fork with any modes", () => {
    accepts(base, { ...fork("full-access"), data: { ...fork("full-access").data, ceiling: "none" } });
  });
});

describe("the privilege ceiling: other changes to a thread", () => {
  it("refuses a merge back into a source broader than the caller, and allows one into a narrow source", () => {
    const lineage = (source: AppThread) => ({ rootThreadId: source.id, parentThreadId: source.id, parentNodeId: null, relation: "fork" as const });
    const ofWide = aProviderThread("thread:fork-of-wide", "steerable", { runtimeMode: "approval-required", interactionMode: "plan", lineage: lineage(WIDE) });
    const ofNarrow = aProviderThread("thread:fork-of-narrow", "steerable", { runtimeMode: "approval-required", interactionMode: "plan", lineage: lineage(NARROW) });
    const history = [...base, existing(ofWide), existing(ofNarrow)];
    expect(refuses(history, cmd("thread.merge_back", { threadId: ofWide.id, summary: "done", ceiling: { callerThreadId: ofWide.id } }), RejectionCode.runtimeModeEscalationDenied)).toContain(
      "of the source thread thread:wide is broader than",
    );
    accepts(history, cmd("thread.merge_back", { threadId: ofNarrow.id, summary: "done", ceiling: { callerThreadId: ofNarrow.id } }));
  });

  it("refuses a reorder when any thread it moves is broader than the caller", () => {
    const pinned = [...base, existing({ ...NARROW, pinnedRank: 0 }), existing({ ...WIDE, pinnedRank: 1 })];
    refuses(pinned, cmd("thread.pin.reorder", { threadIds: [WIDE.id, NARROW.id], ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
    accepts(pinned, cmd("thread.pin.reorder", { threadIds: [WIDE.id, NARROW.id], ceiling: "none" }));
  });

  it("holds archive, unarchive and delete to every thread under the one named: a broader descendant refuses the whole subtree", () => {
    const under = { rootThreadId: NARROW.id, parentThreadId: NARROW.id, parentNodeId: null, relation: "subagent" as const };
    const tree = [...base, existing({ ...WIDE, id: "thread:wide-child", lineage: under })];
    const message = refuses(tree, cmd("thread.delete", { threadId: NARROW.id, ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
    expect(message).toContain("thread:wide-child");
    refuses(tree, cmd("thread.archive", { threadId: NARROW.id, ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
    const deleted = accepts(tree, cmd("thread.delete", { threadId: NARROW.id, ceiling: "none" }));
    expect(deleted.filter((event) => event.type === "thread.deleted").map((event) => event.streamId)).toEqual([NARROW.id, "thread:wide-child"]);
    const narrowTree = [...base, existing({ ...NARROW, id: "thread:narrow-child", lineage: under })];
    accepts(narrowTree, cmd("thread.delete", { threadId: NARROW.id, ceiling: careful }));
  });

  it("refuses organizing or interrupting a broader thread, not a narrow one", () => {
    refuses(base, cmd("thread.pin", { threadId: WIDE.id, ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
    accepts(base, cmd("thread.pin", { threadId: NARROW.id, ceiling: careful }));
    const busy = [...base, runCreated(aRun(WIDE, { id: "run:wide" }))];
    refuses(busy, cmd("run.interrupt", { threadId: WIDE.id, runId: "run:wide", ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
  });
});

describe("the privilege ceiling: scheduled tasks", () => {
  const within = { interactionMode: "plan" as const, createdBy: "agent" as const, createdByThreadId: CAREFUL.id };
  const runNow = (ceiling?: Ceiling) => fire({ cause: "manual", dueAt: NOW, nextFireAt: null, ...(ceiling === undefined ? {} : { ceiling }) });

  it("refuses a task whose work would be broader than the caller, and accepts one within", () => {
    refuses(base, save({ ...within, runtimeMode: "full-access", ceiling: careful }), RejectionCode.runtimeModeEscalationDenied);
    accepts(base, save({ ...within, ceiling: careful }));
  });

  it("refuses a caller's run now of a broader task; the owner and the scheduler fire it", () => {
    const wideTask = accepts(base, save({ runtimeMode: "full-access", ceiling: "none" }));
    expect(refuses(wideTask, runNow(careful), RejectionCode.runtimeModeEscalationDenied)).toContain("of scheduled task scheduled-task:1 is broader than");
    accepts(wideTask, runNow("none"));
    accepts(wideTask, runNow());
  });
});
