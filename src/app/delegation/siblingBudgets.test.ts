import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { ThreadReadOutput } from "../../contracts/tools/threadTools.js";
import { isInRecordedWait } from "../../engine/queries.js";
import { type Step, delegateStep, startDelegationHarness, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * Eight sibling threads delegating at the same moment under one root budget
 * (docs/budgets.md, Reservations), over real MCP with scripted agents: the
 * siblings block on one gate (a t3_thread_wait on a run the test ends), so a
 * single commit releases all eight and their delegate_task calls arrive
 * together. The root's spawns (or turns) limit is never passed: exactly what
 * was left of it becomes grandchildren, every other call gets the typed
 * budget_exceeded, and the root's budget view reports the spend as it is.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

const SIBLINGS = 8;
const LEFT = 3;

interface Gate {
  readonly threadId: string;
  readonly runId: string;
  readonly requestId: string;
}

/** A thread of its own (outside the budgeted tree) whose run waits on a question: answering it ends the run and opens the gate. */
async function closedGate(): Promise<Gate> {
  const gate = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Gate", message: script({ ask: "open the gate?" }, { say: "open" }), target: { providerInstanceId: "a" } });
  const request = await h.until(() => [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === gate.threadId && candidate.status === "pending"), "the gate's question");
  return { ...gate, requestId: request.id };
}

/** A sibling waits at the gate, then delegates one grandchild and waits for it. */
function siblingSteps(gate: Gate): Step[] {
  return [
    { call: "t3_thread_wait", args: { threadId: gate.threadId, runId: gate.runId, timeoutMs: 60_000 } },
    delegateStep([{ say: "grandchild done" }], { mode: "wait", title: "Grandchild" }),
    { say: "sibling done" },
  ];
}

/** The root delegates the siblings, then waits until all of them settle (taking their results, so no notice starts a turn). */
function launchRoot(gate: Gate, budget: Record<string, unknown>) {
  const siblings = Array.from({ length: SIBLINGS }, (_, i) => delegateStep(siblingSteps(gate), { mode: "async", title: `Sibling ${i}` }));
  const steps = [...siblings, { call: "t3_background_wait", args: { timeoutMs: 60_000 }, as: "w" }, { say: "settled {{w.settled}}" }];
  return h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Budgeted root", message: script(...steps), target: { providerInstanceId: "a" }, budget });
}

/** All siblings created and each blocked in its recorded wait at the gate. */
function siblingsAtGate(rootThreadId: string): Promise<DelegatedTask[]> {
  return h.until(
    () => {
      const siblings = tasksOf(h, rootThreadId);
      return siblings.length === SIBLINGS && siblings.every((task) => isInRecordedWait(h.state, task.childThreadId)) ? siblings : null;
    },
    () => `${SIBLINGS} siblings waiting at the gate (${tasksOf(h, rootThreadId).filter((task) => isInRecordedWait(h.state, task.childThreadId)).length} are)`,
    20_000,
  );
}

/** The sibling's recorded wait at the gate: a tool_call node on its run. */
function gateWait(threadId: string, gate: Gate) {
  return [...h.state.nodes.values()].find((node) => node.threadId === threadId && node.kind === "tool_call" && node.label === `t3_thread_wait ${gate.threadId}`);
}

/** What a sibling's delegate_task call answered: the task, or the typed failure. */
interface DelegateAnswer {
  readonly taskId?: string;
  readonly error?: { readonly code: string; readonly message: string; readonly retryable: boolean };
}

/** Open the gate and wait for the root's turn to end; returns it, the siblings' delegate_task answers and the grandchildren. */
async function releaseTogether(gate: Gate, rootRunId: string, siblings: readonly DelegatedTask[]) {
  await h.owner.ok("t3_pending_request_respond", { threadId: gate.threadId, requestId: gate.requestId, answer: "yes" });
  const gateRun = await h.waitForEnd(gate.runId);
  expect(gateRun.status).toBe("completed");
  const rootRun = await h.waitForEnd(rootRunId, 40_000);
  const answers = siblings.flatMap((sibling) => toolResults<DelegateAnswer>(h, sibling.childThreadId, "delegate_task").map((call) => call.result));
  const grandchildren = siblings.flatMap((sibling) => tasksOf(h, sibling.childThreadId));
  return { gateRun, rootRun, answers, grandchildren };
}

/**
 * Released together: every sibling's wait at the gate ended (one commit
 * answers them all) before the first delegation was decided. The accepted
 * delegations are the first ones decided: a refusal comes only once the pool
 * is reached.
 */
function expectReleasedTogether(gate: Gate, gateRun: Run, siblings: readonly DelegatedTask[], grandchildren: readonly DelegatedTask[]): void {
  const waitEnds = siblings.map((sibling) => gateWait(sibling.childThreadId, gate)?.endedAt ?? null);
  expect(waitEnds.every((endedAt) => endedAt !== null && endedAt >= gateRun.endedAt!), waitEnds.join(", ")).toBe(true);
  const firstDecided = grandchildren.map((task) => task.createdAt).sort()[0]!;
  expect(waitEnds.every((endedAt) => endedAt! <= firstDecided), `${waitEnds.join(", ")} <= ${firstDecided}`).toBe(true);
}

const readBudget = async (threadId: string) => (await h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId })).budget;

describe("sibling threads delegating at once under one root budget", { timeout: 60_000 }, () => {
  it(`8 siblings delegate together under spawns ${SIBLINGS + LEFT}: exactly ${LEFT} grandchildren, ${SIBLINGS - LEFT} budget_exceeded`, async () => {
    const limit = SIBLINGS + LEFT;
    const gate = await closedGate();
    const root = await launchRoot(gate, { spawns: limit });
    const siblings = await siblingsAtGate(root.threadId);
    expect(await readBudget(root.threadId)).toMatchObject({ spent: { spawns: SIBLINGS }, remaining: { spawns: LEFT }, reached: [], exceeded: null });

    const { gateRun, rootRun, answers, grandchildren } = await releaseTogether(gate, root.runId, siblings);
    expect(grandchildren).toHaveLength(LEFT);
    expect(answers).toHaveLength(SIBLINGS);
    const accepted = answers.filter((answer) => answer.error === undefined);
    const refused = answers.filter((answer) => answer.error !== undefined);
    expect(new Set(accepted.map((answer) => answer.taskId))).toEqual(new Set(grandchildren.map((task) => task.taskId)));
    expect(refused).toHaveLength(SIBLINGS - LEFT);
    for (const answer of refused) {
      expect(answer.error).toEqual({ code: "budget_exceeded", message: expect.stringContaining(`the spawns budget of thread ${root.threadId} ran out (${limit} of ${limit})`), retryable: false });
    }
    expectReleasedTogether(gate, gateRun, siblings, grandchildren);
    // The limit was reached, never passed: the reactor recorded no exhaustion and stopped nothing.
    expect(await readBudget(root.threadId)).toMatchObject({ limits: { spawns: limit }, spent: { spawns: limit }, remaining: { spawns: 0 }, reached: ["spawns"], exceeded: null });
    expect(rootRun.status).toBe("completed");
    expect([...siblings, ...grandchildren].map((task) => h.state.tasks.get(task.taskId)!.status)).toEqual(Array(SIBLINGS + LEFT).fill("completed"));
  });

  it(`8 siblings delegate together under turns ${1 + SIBLINGS + LEFT}: exactly ${LEFT} grandchild turns start, ${SIBLINGS - LEFT} budget_exceeded`, async () => {
    // The root's turn and the siblings' hold 1 + 8 turns before the gate opens.
    const limit = 1 + SIBLINGS + LEFT;
    const gate = await closedGate();
    const root = await launchRoot(gate, { turns: limit });
    const siblings = await siblingsAtGate(root.threadId);
    expect(await readBudget(root.threadId)).toMatchObject({ spent: { turns: 1 + SIBLINGS }, remaining: { turns: LEFT }, reached: [], exceeded: null });

    const { gateRun, rootRun, answers, grandchildren } = await releaseTogether(gate, root.runId, siblings);
    expect(grandchildren).toHaveLength(LEFT);
    expect(answers).toHaveLength(SIBLINGS);
    const refused = answers.filter((answer) => answer.error !== undefined);
    expect(refused).toHaveLength(SIBLINGS - LEFT);
    for (const answer of refused) {
      expect(answer.error).toEqual({ code: "budget_exceeded", message: expect.stringContaining(`the turns budget of thread ${root.threadId} ran out (${limit} of ${limit})`), retryable: false });
    }
    expectReleasedTogether(gate, gateRun, siblings, grandchildren);
    // Every run of the tree, counted from the state: the root's, eight siblings', three grandchildren's, one each, all started and completed.
    const tree = [root.threadId, ...siblings.map((task) => task.childThreadId), ...grandchildren.map((task) => task.childThreadId)];
    const runs = tree.flatMap((threadId) => h.runs(threadId));
    expect(runs.map((run) => [run.status, run.startedAt !== null])).toEqual(Array(limit).fill(["completed", true]));
    expect(await readBudget(root.threadId)).toMatchObject({ limits: { turns: limit }, spent: { turns: limit }, remaining: { turns: 0 }, reached: ["turns"], exceeded: null });
    expect(rootRun.status).toBe("completed");
  });
});
