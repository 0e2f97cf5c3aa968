import type { ThreadCreatedRecordCommand, ThreadTitleRegenerationCompleteCommand } from "../../contracts/commands/noticeCommands.js";
import { threadEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { joinId } from "../ids.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { activeRun } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread, validTitle } from "./guards.js";

/** The id of the thread_created item a creator gets for one child: one item per pair. */
export function threadCreatedItemId(threadId: string, childThreadId: string): string {
  return joinId("turn-item", "thread-created", threadId, childThreadId);
}

/**
 * thread.created.record: a thread_created item on the creator's timeline
 * (its given run, else its active run, else none) pointing at a thread it
 * created, with the new thread's relation and title.
 */
export function decideThreadCreatedRecord(state: OrchestrationState, command: ThreadCreatedRecordCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const child = liveThread(state, command.data.childThreadId);
  if (child.kind === "rejected") return child;
  const changes = new Changes(state, ctx);
  const itemId = threadCreatedItemId(found.thread.id, child.thread.id);
  if (changes.existingItem(itemId) !== undefined) {
    return reject(RejectionCode.threadCreatedAlreadyRecorded, `thread ${found.thread.id} already records creating ${child.thread.id}`);
  }
  let runId = activeRun(changes, found.thread.id)?.id ?? null;
  if (command.data.runId !== undefined) {
    const run = changes.run(command.data.runId);
    if (run === undefined || run.threadId !== found.thread.id) return reject(RejectionCode.runNotFound, `run ${command.data.runId} does not exist in thread ${found.thread.id}`);
    runId = run.id;
  }
  changes.addItem(found.thread.id, runId, { type: "thread_created", childThreadId: child.thread.id, relation: child.thread.lineage.relation, title: child.thread.title }, itemId);
  return changes.done();
}

/**
 * thread.title.regeneration.complete: the regenerated title replaces the
 * interim one and titleRegenerating clears. A rename made meanwhile won (it
 * cleared titleRegenerating), so this is refused then.
 */
export function decideTitleRegenerationComplete(state: OrchestrationState, command: ThreadTitleRegenerationCompleteCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (!thread.titleRegenerating) return reject(RejectionCode.titleRegenerationNotRunning, `no title regeneration is running for thread ${thread.id}`);
  const valid = validTitle(command.data.title);
  if (valid.kind === "rejected") return valid;
  return accept([threadEvent("thread.metadata-updated", changed(thread, ctx, { title: valid.title, titleRegenerating: false }))]);
}
