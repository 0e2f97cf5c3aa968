import type { WaitEndedCommand, WaitStartedCommand } from "../../contracts/commands/waitCommands.js";
import { type Run, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { nodeEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { openAttempt } from "./attempts.js";
import { Changes } from "./changes.js";
import { releaseRunHolds } from "../delegation/holds.js";

/**
 * Recorded waits (src/contracts/commands/waitCommands.ts): an agent blocked in
 * a wait tool is a `tool_call` node in status `waiting` on its active run.
 * The wait is open while the node waits and its run is active, so a wait cut
 * off by a restart closes with its run.
 */
export function decideWaitStarted(state: OrchestrationState, command: WaitStartedCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const found = liveThread(state, data.threadId);
  if (found.kind === "rejected") return found;
  const run = state.runs.get(data.runId);
  if (run === undefined || run.threadId !== data.threadId) return reject("run_not_found", `run ${data.runId} does not exist in thread ${data.threadId}`);
  if (run.status === "queued" || isTerminalRunStatus(run.status)) return reject("run_not_active", `run ${run.id} is ${run.status}`);
  if (state.nodes.has(data.nodeId)) return reject("wait_already_recorded", `wait ${data.nodeId} was already recorded`);
  const attempt = openAttempt(new Changes(state, ctx), run.id);
  return accept([
    nodeEvent({
      id: data.nodeId,
      threadId: run.threadId,
      runId: run.id,
      runAttemptId: attempt?.id ?? null,
      parentNodeId: null,
      kind: "tool_call",
      status: "waiting",
      label: `${data.label} ${data.waitingOn}`,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      endedAt: null,
    }),
  ]);
}

export function decideWaitEnded(state: OrchestrationState, command: WaitEndedCommand, ctx: DecideContext): Decision {
  const node = state.nodes.get(command.data.nodeId);
  if (node === undefined || node.threadId !== command.data.threadId || node.kind !== "tool_call" || node.status !== "waiting") {
    return reject("wait_not_found", `no open wait ${command.data.nodeId} in thread ${command.data.threadId}`);
  }
  return accept([nodeEvent({ ...node, status: "completed", updatedAt: ctx.now, endedAt: ctx.now })]);
}

/** A run's end closes the waits still open on it and releases their task holds (the agent's call was cut off with the turn). */
export function closeRunWaits(changes: Changes, run: Run): void {
  releaseRunHolds(changes, run);
  for (const nodeId of changes.state.openWaits.get(run.threadId) ?? []) {
    const node = changes.state.nodes.get(nodeId);
    if (node?.runId === run.id) changes.events.push(nodeEvent({ ...node, status: "interrupted", updatedAt: changes.ctx.now, endedAt: changes.ctx.now }));
  }
}
