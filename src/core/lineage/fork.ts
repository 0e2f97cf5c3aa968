import type { ThreadForkCommand } from "../../contracts/commands/lineageCommands.js";
import type { ContextTransfer } from "../../contracts/entities/contextTransfers.js";
import { threadEvent } from "../../contracts/events.js";
import { INTERACTION_MODES, RUNTIME_MODES } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import type { OrchestrationState } from "../state.js";
import { MAX_TITLE_LENGTH, invalidModeRejection, liveThread, validTitle } from "../thread/guards.js";
import { readMoreOf } from "./context.js";
import { buildTranscript, transcriptRuns } from "./transcript.js";
import { newThreadRecord } from "../thread/fresh.js";

/**
 * Portable fork context: the source thread's transcript through run
 * `throughOrdinal`, bounded like a handoff, as a pending `fork` transfer into
 * `targetThreadId` that its first run receives. Null when the source has no
 * run to carry. Every driver gets this; none offers a native fork entry point
 * yet (docs/threads.md, "Native fork").
 */
export function forkTransfer(changes: Changes, source: AppThread, throughOrdinal: number | null, targetThreadId: string): ContextTransfer | null {
  if (throughOrdinal === null) return null;
  const runs = changes.threadRuns(source.id).filter((run) => run.ordinal <= throughOrdinal && run.status !== "queued");
  const last = runs[runs.length - 1];
  if (last === undefined) return null;
  const transcript = buildTranscript({
    tag: "fork",
    attributes: [
      ["source_thread", source.id],
      ["through_run", String(throughOrdinal)],
    ],
    instructions: `This thread is a fork of thread "${source.title}". Below is that thread's transcript through run ${throughOrdinal}; you continue from that point on your own. Your first message follows after this context.`,
    runs: transcriptRuns(changes.state.turnItems.get(source.id) ?? [], runs),
    readMore: readMoreOf(source.id),
  });
  const now = changes.ctx.now;
  return changes.putTransfer({
    id: changes.ctx.allocate.contextTransfer(),
    threadId: targetThreadId,
    sourceThreadId: source.id,
    kind: "fork",
    status: "pending",
    subagentId: null,
    runId: last.id,
    text: transcript.text,
    createdAt: now,
    updatedAt: now,
    consumedAt: null,
    coveredRunOrdinals: transcript.covered,
    deliveredRunId: null,
  });
}

/** The title of a fork made without one. */
export function forkTitle(source: AppThread): string {
  const title = `Fork of ${source.title}`;
  return title.length <= MAX_TITLE_LENGTH ? title : `${title.slice(0, MAX_TITLE_LENGTH - 3)}...`;
}

/**
 * thread.fork: a new thread with lineage `fork` from the source (same
 * project, worktree, branch and auto-settle), the source's transcript
 * through run `sourceRunOrdinal` (default: its newest run) as a pending fork
 * transfer, and a `fork` item in both timelines. The new thread stays idle
 * until a message is sent to it; its first run receives the transfer.
 */
export function decideThreadFork(state: OrchestrationState, command: ThreadForkCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const found = liveThread(state, data.sourceThreadId);
  if (found.kind === "rejected") return found;
  const source = found.thread;
  const existing = state.threads.get(data.threadId);
  if (existing !== undefined) {
    return existing.deletedAt !== null ? reject("thread_deleted", `thread ${data.threadId} was deleted; its id cannot be reused`) : reject("thread_already_exists", `thread ${data.threadId} already exists`);
  }
  if (ctx.providers(data.providerInstanceId) === null) return reject("provider_unavailable", `provider instance ${data.providerInstanceId} is not available`);
  const badMode = invalidModeRejection("runtime", data.runtimeMode, RUNTIME_MODES) ?? invalidModeRejection("interaction", data.interactionMode, INTERACTION_MODES);
  if (badMode !== null) return badMode;
  let title = forkTitle(source);
  if (data.title !== undefined) {
    const valid = validTitle(data.title);
    if (valid.kind === "rejected") return valid;
    title = valid.title;
  }
  const changes = new Changes(state, ctx);
  const runs = changes.threadRuns(source.id);
  const newest = runs[runs.length - 1]?.ordinal ?? null;
  if (data.sourceRunOrdinal !== undefined && (newest === null || data.sourceRunOrdinal > newest)) {
    return reject("invalid_fork_point", `thread ${source.id} has ${newest ?? 0} run(s); it cannot be forked at run ${data.sourceRunOrdinal}`);
  }
  const through = data.sourceRunOrdinal ?? newest;
  const now = ctx.now;
  const fork: AppThread = newThreadRecord(now, {
    id: data.threadId,
    projectId: source.projectId,
    title,
    providerInstanceId: data.providerInstanceId,
    modelSelection: { providerInstanceId: data.providerInstanceId, model: data.model },
    runtimeMode: data.runtimeMode,
    interactionMode: data.interactionMode,
    worktreePath: source.worktreePath,
    branch: source.branch,
    lineage: { rootThreadId: source.lineage.rootThreadId, parentThreadId: source.id, parentNodeId: null, relation: "fork" },
    createdBy: data.createdBy ?? "user",
    creationSource: data.creationSource ?? "api",
    autoSettle: source.autoSettle,
    workspace: source.workspace,
    pullRequestWatch: source.pullRequestWatch,
    structuredOutput: source.structuredOutput,
    budget: source.budget,
  });
  changes.events.push(threadEvent("thread.created", fork));
  forkTransfer(changes, source, through, fork.id);
  const marker = { type: "fork" as const, sourceThreadId: source.id, targetThreadId: fork.id, sourceRunOrdinal: through };
  changes.addItem(source.id, null, marker);
  changes.addItem(fork.id, null, marker);
  return changes.done();
}
