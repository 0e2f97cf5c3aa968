import type { ThreadMergeBackCommand } from "../../contracts/commands/lineageCommands.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { activeRun } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { readMoreOf } from "./context.js";
import { buildTranscript, transcriptRuns, utf8Length } from "./transcript.js";

/**
 * thread.merge_back: a fork's (or a delegated child's) outcome goes back to
 * the thread it came from (`lineage.parentThreadId`) as a pending
 * `merge_back` context transfer, which the source's next run receives. It
 * covers the thread's runs that finished since its last merge back, as a
 * bounded transcript, or the caller's own `summary` instead. A notification
 * item tells the source's timeline. Nothing starts a run in the source.
 */
export function decideThreadMergeBack(state: OrchestrationState, command: ThreadMergeBackCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const sourceId = thread.lineage.parentThreadId;
  if (sourceId === null) return reject("no_merge_source", `thread ${thread.id} is not a fork or a delegated child: it has no source thread to merge back into`);
  const sourceFound = liveThread(state, sourceId);
  if (sourceFound.kind === "rejected") return sourceFound;
  const source = sourceFound.thread;
  const changes = new Changes(state, ctx);
  if (command.data.transferId !== undefined && changes.transfer(command.data.transferId) !== undefined) {
    return reject("transfer_already_exists", `context transfer ${command.data.transferId} already exists`);
  }
  let mergedThrough = 0;
  for (const transfer of changes.threadTransfers(thread.id)) {
    if (transfer.kind === "merge_back" && transfer.sourceThreadId === thread.id) mergedThrough = Math.max(mergedThrough, transfer.coveredRunOrdinals?.to ?? 0);
  }
  const runs = changes.threadRuns(thread.id).filter((run) => run.ordinal > mergedThrough && isTerminalRunStatus(run.status) && run.startedAt !== null);
  const summary = command.data.summary;
  if (runs.length === 0 && summary === undefined) {
    return reject("nothing_to_merge", `thread ${thread.id} has no finished run since its last merge back (through run ${mergedThrough})`);
  }
  const first = runs[0];
  const last = runs[runs.length - 1];
  const covered = first === undefined || last === undefined ? null : { from: first.ordinal, to: last.ordinal };
  const rangeText = covered === null ? "none" : covered.from === covered.to ? `${covered.from}` : `${covered.from}-${covered.to}`;
  const transcript = buildTranscript({
    tag: "merge_back",
    attributes: [
      ["from_thread", thread.id],
      ["relation", thread.lineage.relation],
      ["runs", rangeText],
    ],
    instructions: `Thread "${thread.title}", a ${thread.lineage.relation} of this thread, merges its outcome back here${summary === undefined ? "" : " in its own words"}. Take it into account; the new message follows after this context.`,
    runs: summary === undefined ? transcriptRuns(changes.state.turnItems.get(thread.id) ?? [], runs) : [],
    ...(summary === undefined ? {} : { summary }),
    readMore: readMoreOf(thread.id),
  });
  const now = ctx.now;
  changes.putTransfer({
    id: command.data.transferId ?? ctx.allocate.contextTransfer(),
    threadId: source.id,
    sourceThreadId: thread.id,
    kind: "merge_back",
    status: "pending",
    subagentId: null,
    runId: last?.id ?? null,
    text: transcript.text,
    createdAt: now,
    updatedAt: now,
    consumedAt: null,
    coveredRunOrdinals: covered,
    deliveredRunId: null,
  });
  const what = summary === undefined ? `run${runs.length === 1 ? "" : "s"} ${rangeText}` : covered === null ? "a summary" : `a summary of runs ${rangeText}`;
  changes.addItem(source.id, activeRun(changes, source.id)?.id ?? null, {
    type: "notification",
    title: `Merged back from ${thread.title}`,
    text: `Thread "${thread.title}" merged back ${what} (${utf8Length(transcript.text)} bytes); the next run of this thread receives it.`,
    sourceThreadId: thread.id,
  });
  return changes.done();
}
