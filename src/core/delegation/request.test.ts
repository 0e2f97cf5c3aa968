import { describe, expect, it } from "vitest";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { ExecutionNode } from "../../contracts/entities/runs.js";
import type { Subagent } from "../../contracts/entities/subagents.js";
import { contextTransferEvent, nodeEvent, subagentEvent, threadEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { aThread, existing } from "../testing/fixtures.js";
import {
  ROOT,
  ROOT_RUN,
  delegate,
  finish,
  fold,
  labelled,
  labelledContext,
  rootWithRun,
  setupContext,
  step,
  steps,
} from "../testing/delegationFixtures.js";
import { aProviderThread, aRun, after, anItem, effects, itemEvents, runCreated, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const w = (prefix: string, n: number) => labelled("w", prefix, n);
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const PROMPT = "Role: implementation.\n\nWrite the parser for the config file.";

const request = delegate("t1", ROOT, ROOT_RUN, {
  task: "Write the parser for the config file.",
  prompt: PROMPT,
  title: "Parser",
  role: "implementation",
  mode: "wait",
  providerInstanceId: "plain",
  model: "m2",
  runtimeMode: "approval-required",
  interactionMode: "plan",
  clientRequestId: "req-1",
});

describe("delegated_task.request", () => {
  it("creates the child thread, both nodes, the child run with only the prompt, the task, the parent's items and a consumed spawn transfer in one decision", () => {
    const parentNode: ExecutionNode = {
      id: w("node", 1),
      threadId: ROOT,
      runId: ROOT_RUN,
      runAttemptId: null,
      parentNodeId: null,
      kind: "subagent",
      status: "running",
      label: "Parser",
      createdAt: NOW,
      updatedAt: NOW,
      endedAt: null,
    };
    const childNode: ExecutionNode = { ...parentNode, id: w("node", 2), threadId: CHILD, runId: CHILD_RUN, parentNodeId: w("node", 1), kind: "turn" };
    const child = aThread({
      id: CHILD,
      projectId: "project:9",
      worktreePath: "/repo/wt",
      branch: "feature/x",
      title: "Parser",
      providerInstanceId: "plain",
      modelSelection: { providerInstanceId: "plain", model: "m2" },
      runtimeMode: "approval-required",
      interactionMode: "plan",
      lineage: { rootThreadId: ROOT, parentThreadId: ROOT, parentNodeId: w("node", 1), relation: "subagent" },
      createdBy: "agent",
      creationSource: "mcp",
      createdAt: NOW,
      updatedAt: NOW,
    });
    const run = aRun(child, {
      id: CHILD_RUN,
      kind: "delegated_task",
      status: "queued",
      messageId: "message:t1",
      createdAt: NOW,
      updatedAt: NOW,
    });
    const subagent: Subagent = {
      id: "subagent:t1",
      threadId: ROOT,
      runId: ROOT_RUN,
      parentNodeId: w("node", 1),
      providerInstanceId: "plain",
      driver: "scripted",
      childThreadId: CHILD,
      origin: "app_delegated",
      agentLabel: "implementation",
      prompt: PROMPT,
      result: null,
      status: "running",
      createdAt: NOW,
      updatedAt: NOW,
      endedAt: null,
    };
    const task: DelegatedTask = {
      taskId: "subagent:t1",
      parentThreadId: ROOT,
      parentRunId: ROOT_RUN,
      parentNodeId: w("node", 1),
      childThreadId: CHILD,
      childRunId: CHILD_RUN,
      childNodeId: w("node", 2),
      providerInstanceId: "plain",
      model: "m2",
      role: "implementation",
      title: "Parser",
      task: "Write the parser for the config file.",
      mode: "wait",
      runtimeMode: "approval-required",
      interactionMode: "plan",
      clientRequestId: "req-1",
      status: "running",
      summary: null,
      resultContextTransferId: null,
      wakePolicy: "on_completion",
      completionDelivery: "not_ready",
      cancelReason: null,
      cancelRequestedAt: null,
      depth: 1,
      notices: [],
      createdAt: NOW,
      updatedAt: NOW,
    };
    const state = given(...rootWithRun())
      .when(request, labelledContext("w"))
      .then(
        [
          threadEvent("thread.created", child),
          nodeEvent(parentNode),
          nodeEvent(childNode),
          runCreated(run),
          ...itemEvents(
            anItem(CHILD, CHILD_RUN, 0, w("turn-item", 3), { type: "user_message", messageId: "message:t1", text: PROMPT, createdBy: "agent", creationSource: "mcp" }, { createdAt: NOW }),
          ),
          runUpdated(after(run, { status: "starting" })),
          subagentEvent(subagent, task),
          ...itemEvents(anItem(ROOT, ROOT_RUN, 1, w("turn-item", 4), { type: "thread_created", childThreadId: CHILD, relation: "subagent", title: "Parser" }, { createdAt: NOW })),
          ...itemEvents(
            anItem(
              ROOT,
              ROOT_RUN,
              2,
              w("turn-item", 5),
              { type: "subagent", subagentId: "subagent:t1", childThreadId: CHILD, agentLabel: "implementation", prompt: PROMPT, result: null, status: "running" },
              { createdAt: NOW },
            ),
          ),
          contextTransferEvent("context-transfer.created", {
            id: w("context-transfer", 6),
            threadId: CHILD,
            sourceThreadId: ROOT,
            kind: "subagent_spawn",
            status: "consumed",
            subagentId: "subagent:t1",
            runId: CHILD_RUN,
            text: PROMPT,
            createdAt: NOW,
            updatedAt: NOW,
            consumedAt: NOW,
          }),
        ],
        [effects.startTurn(CHILD, CHILD_RUN)],
      );
    // The child sees the prompt and nothing of the parent's history.
    expect(state.turnItems.get(CHILD)?.map((item) => item.type)).toEqual(["user_message"]);
    expect(state.taskByChildThread.get(CHILD)).toBe("subagent:t1");
    expect(state.threads.get(CHILD)?.queuedRuns).toEqual([]);
    // The parent's run goes on: a child never ends or blocks it.
    expect(state.runs.get(ROOT_RUN)?.status).toBe("running");
  });

  it("labels the subagent with the role when given, else the title, and takes the wake policy from the command", () => {
    const state = fold(step(rootWithRun(), delegate("t1", ROOT, ROOT_RUN, { title: "Look around", wakePolicy: "never" }), labelledContext("w")));
    expect(state.subagents.get("subagent:t1")?.agentLabel).toBe("Look around");
    expect(state.tasks.get("subagent:t1")?.wakePolicy).toBe("never");
  });

  it("nests: a child's running turn delegates a grandchild under the same root, one level deeper", () => {
    const ctx = setupContext();
    const history = step(rootWithRun(), delegate("t1"), ctx);
    const state = fold(step(history, delegate("g1", CHILD, CHILD_RUN), ctx));
    const grandchild = state.threads.get("thread:g1")!;
    const task = state.tasks.get("subagent:g1")!;
    expect(grandchild.lineage).toEqual({ rootThreadId: ROOT, parentThreadId: CHILD, parentNodeId: task.parentNodeId, relation: "subagent" });
    expect(state.nodes.get(task.parentNodeId)).toMatchObject({ threadId: CHILD, runId: CHILD_RUN, kind: "subagent" });
    expect(task.depth).toBe(2);
    expect(state.subagents.get("subagent:g1")?.threadId).toBe(CHILD);
  });

  describe("rejections", () => {
    it("rejects a parent run that is not an active run of the parent thread: parent_not_active", () => {
      const root = aProviderThread(ROOT);
      const done = aRun(root, { id: ROOT_RUN, status: "completed", endReason: "completed", endedAt: NOW });
      given(existing(root), runCreated(done)).when(delegate("t1")).thenRejects(RejectionCode.parentNotActive);
      const queued = aRun(root, { id: ROOT_RUN, status: "queued", queueRank: 0 });
      given(existing(root), runCreated(queued)).when(delegate("t1")).thenRejects(RejectionCode.parentNotActive);
      given(existing(root)).when(delegate("t1")).thenRejects(RejectionCode.parentNotActive);
      const other = aProviderThread("thread:other");
      given(existing(root), existing(other), runCreated(aRun(other, { id: "run:other" })))
        .when(delegate("t1", ROOT, "run:other"))
        .thenRejects(RejectionCode.parentNotActive);
    });

    it("rejects a task id that exists: task_already_exists", () => {
      const history = step(rootWithRun(), delegate("t1"), setupContext());
      given(...history)
        .when(delegate("t1", ROOT, ROOT_RUN, { childThreadId: "thread:t2", childRunId: "run:t2", childMessageId: "message:t2" }))
        .thenRejects(RejectionCode.taskAlreadyExists);
    });

    it("rejects a child thread id that exists: thread_already_exists", () => {
      given(...rootWithRun(), existing(aThread({ id: CHILD })))
        .when(delegate("t1"))
        .thenRejects(RejectionCode.threadAlreadyExists);
    });

    it("rejects an unknown provider instance: provider_unavailable", () => {
      given(...rootWithRun())
        .when(delegate("t1", ROOT, ROOT_RUN, { providerInstanceId: "missing" }))
        .thenRejects(RejectionCode.providerUnavailable);
    });

    it("rejects a deleted or unknown parent thread", () => {
      const root = fold(rootWithRun()).threads.get(ROOT)!;
      given(...rootWithRun(), threadEvent("thread.deleted", { ...root, deletedAt: NOW }))
        .when(delegate("t1"))
        .thenRejects(RejectionCode.threadDeleted);
      given().when(delegate("t1")).thenRejects(RejectionCode.threadNotFound);
    });
  });

  describe("guards (config limits)", () => {
    it("refuses a task deeper than maxDelegationDepth: delegation_depth_exceeded", () => {
      const ctx = setupContext({ maxDelegationDepth: 1 });
      const history = step(rootWithRun(), delegate("t1"), ctx);
      given(...history)
        .when(delegate("g1", CHILD, CHILD_RUN), labelledContext("w", { limits: { maxDelegationDepth: 1 } }))
        .thenRejects(RejectionCode.delegationDepthExceeded);
      // One level more allowed: the grandchild is accepted at depth 2.
      const deeper = fold(step(history, delegate("g1", CHILD, CHILD_RUN), labelledContext("w", { limits: { maxDelegationDepth: 2 } })));
      expect(deeper.tasks.get("subagent:g1")?.depth).toBe(2);
    });

    it("refuses more unfinished children than maxActiveChildrenPerThread; finished tasks do not count: active_children_exceeded", () => {
      const limits = { maxActiveChildrenPerThread: 2 };
      const ctx = setupContext(limits);
      const two = steps(rootWithRun(), [delegate("t1"), delegate("t2")], ctx);
      const rejection = given(...two).when(delegate("t3"), labelledContext("w", { limits })).thenRejects(RejectionCode.activeChildrenExceeded);
      expect(rejection.message).toContain("2 unfinished tasks");
      // A grandchild counts for its own parent, not the root.
      step(two, delegate("g1", CHILD, CHILD_RUN), labelledContext("w", { limits }));
      // t1 finishes: it no longer counts.
      const oneDone = steps(two, finish(CHILD, CHILD_RUN, "done"), ctx);
      expect(fold(oneDone).tasks.get("subagent:t1")?.status).toBe("completed");
      const state = fold(step(oneDone, delegate("t3"), labelledContext("w", { limits })));
      expect(state.tasks.get("subagent:t3")?.status).toBe("running");
    });

    it("refuses spawns past maxSpawnsPerRootThread across the whole tree, finished ones included: spawn_budget_exceeded", () => {
      const limits = { maxSpawnsPerRootThread: 3 };
      const ctx = setupContext(limits);
      const three = steps(rootWithRun(), [delegate("t1"), delegate("g1", CHILD, CHILD_RUN), delegate("t2")], ctx);
      const when = labelledContext("w", { limits });
      given(...three).when(delegate("t3"), when).thenRejects(RejectionCode.spawnBudgetExceeded);
      given(...three).when(delegate("g2", CHILD, CHILD_RUN), when).thenRejects(RejectionCode.spawnBudgetExceeded);
      // Finishing tasks gives nothing back: the budget counts every spawn.
      const finished = steps(three, finish("thread:t2", "run:t2", "done"), ctx);
      given(...finished).when(delegate("t3"), when).thenRejects(RejectionCode.spawnBudgetExceeded);
      // Another root has its own budget.
      const other = aProviderThread("thread:other");
      const withOther = [...three, existing(other), runCreated(aRun(other, { id: "run:other" }))];
      expect(fold(step(withOther, delegate("o1", "thread:other", "run:other"), when)).tasks.has("subagent:o1")).toBe(true);
    });

    it("checks the depth before the counts", () => {
      const limits = { maxDelegationDepth: 1, maxActiveChildrenPerThread: 1, maxSpawnsPerRootThread: 1 };
      const history = step(rootWithRun(), delegate("t1"), setupContext(limits));
      given(...history).when(delegate("g1", CHILD, CHILD_RUN), labelledContext("w", { limits })).thenRejects(RejectionCode.delegationDepthExceeded);
      given(...history).when(delegate("t2"), labelledContext("w", { limits })).thenRejects(RejectionCode.activeChildrenExceeded);
    });
  });
});

describe("delegated_task.request with relation fork", () => {
  it("gives the child lineage fork and the parent's transcript as a fork transfer delivered with the prompt to its first run", () => {
    const state = fold(given(...rootWithRun()).when(delegate("t1", ROOT, ROOT_RUN, { relation: "fork", prompt: "Try the other approach." })).thenHistory());
    expect(state.threads.get(CHILD)!.lineage).toMatchObject({ parentThreadId: ROOT, relation: "fork" });
    const transfers = [...state.transfers.values()];
    expect(transfers.map((t) => [t.kind, t.threadId, t.status])).toEqual([
      ["fork", CHILD, "consumed"],
      ["subagent_spawn", CHILD, "consumed"],
    ]);
    const fork = transfers[0]!;
    expect(fork).toMatchObject({ sourceThreadId: ROOT, deliveredRunId: CHILD_RUN, coveredRunOrdinals: { from: 1, to: 1 } });
    expect(fork.text).toContain('<run ordinal="1" kind="user_turn" status="running">');
    expect(fork.text).toContain("<user>plan the work</user>");
    expect(state.turnItems.get(CHILD)!.map((item) => item?.type)).toEqual(["user_message", "fork"]);
    expect(state.turnItems.get(ROOT)!.find((item) => item?.type === "thread_created")).toMatchObject({ relation: "fork" });
    expect(state.tasks.get("subagent:t1")).toMatchObject({ childThreadId: CHILD, status: "running" });
  });

  it("keeps a plain subagent child bare: no fork transfer", () => {
    const state = fold(given(...rootWithRun()).when(delegate("t1")).thenHistory());
    expect([...state.transfers.values()].map((t) => t.kind)).toEqual(["subagent_spawn"]);
    expect(state.threads.get(CHILD)!.lineage.relation).toBe("subagent");
  });
});
