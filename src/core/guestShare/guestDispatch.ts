import type { MessageDispatchCommand } from "../../contracts/commands/runCommands.js";
import { guestMessageText } from "../../contracts/entities/guestShares.js";
import type { Run } from "../../contracts/entities/runs.js";
import { type KnownDomainEvent, runEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { decideMessageDispatch } from "../run/send.js";
import { changed } from "../thread/guards.js";
import { pendingGuestMessage, withMessage } from "./guestShare.js";

/**
 * message.dispatch with guestMessageId: the owner sends a guest's pending
 * message. `text` must be the guest's text as submitted (the owner approves
 * what the guest wrote, not an edit of it); the agent receives it prefixed
 * as spec 004 §3.4 says. The send itself is an ordinary dispatch (every mode
 * and refusal of run/send.ts); its run carries `guestMessageId`, and the
 * message is marked sent in the same decision.
 */
export function decideGuestMessageDispatch(state: OrchestrationState, command: MessageDispatchCommand, guestMessageId: string, ctx: DecideContext): Decision {
  const found = pendingGuestMessage(state, command.data.threadId, guestMessageId);
  if (found.kind === "rejected") return found;
  const { share, message } = found;
  if (command.data.text !== message.text) {
    return reject(RejectionCode.invalidGuestMessage, `the text of a sent guest message must be the guest's own (guest message ${guestMessageId})`);
  }
  const runId = command.data.runId ?? ctx.allocate.run();
  const { guestMessageId: _sent, guestAttachmentsDir, ...data } = command.data;
  const files = (message.attachments ?? []).map((attachment) => ({ name: attachment.name, path: `${guestAttachmentsDir ?? "guest-attachments"}/${attachment.id}` }));
  const text = guestMessageText(share.guest?.name ?? "guest", message.text, files);
  const decision = decideMessageDispatch(state, { ...command, data: { ...data, text, runId } }, ctx);
  if (decision.kind === "rejected") return decision;
  // A steered turn creates no run: the message joins the running one, which the guest message then names.
  const events = decision.events.map((event) => tagRun(event, runId, guestMessageId));
  const steered = !events.some((event) => (event.type === "run.created" || event.type === "run.updated") && event.data.run.guestMessageId === guestMessageId);
  const sentRunId = steered ? activeRunId(events, found.thread.id) : runId;
  const thread = latestThread(events, found.thread);
  const next: AppThread = {
    ...changed(thread, ctx, { guestShare: withMessage(share, { ...message, status: "sent", decidedAt: ctx.now, runId: sentRunId }) }),
    queuedRuns: queuedRunsAfter(state, events, thread.id),
  };
  return accept([...events, threadEvent("thread.guest-share-updated", next)], decision.effects);
}

function tagRun(event: KnownDomainEvent, runId: string, guestMessageId: string): KnownDomainEvent {
  if ((event.type === "run.created" || event.type === "run.updated") && event.data.run.id === runId) {
    return runEvent(event.type, { ...event.data.run, guestMessageId });
  }
  return event;
}

/** The run a steer went into: the last run event of the thread in the decision. */
function activeRunId(events: readonly KnownDomainEvent[], threadId: string): string | null {
  let id: string | null = null;
  for (const event of events) if ((event.type === "run.created" || event.type === "run.updated") && event.data.run.threadId === threadId) id = event.data.run.id;
  return id;
}

/** The thread as the dispatch's own thread events leave it. */
function latestThread(events: readonly KnownDomainEvent[], thread: AppThread): AppThread {
  let latest = thread;
  for (const event of events) if ("thread" in event.data && event.data.thread.id === thread.id) latest = event.data.thread;
  return latest;
}

/**
 * The thread's queue once the decision's runs are folded in: evolve derives
 * it from the runs, and the share event comes after them, so it must carry
 * the queue they leave rather than the one before.
 */
function queuedRunsAfter(state: OrchestrationState, events: readonly KnownDomainEvent[], threadId: string): AppThread["queuedRuns"] {
  const runs = new Map<string, Run>();
  for (const id of state.threadRuns.get(threadId) ?? []) {
    const run = state.runs.get(id);
    if (run !== undefined) runs.set(id, run);
  }
  for (const event of events) if ((event.type === "run.created" || event.type === "run.updated") && event.data.run.threadId === threadId) runs.set(event.data.run.id, event.data.run);
  return [...runs.values()]
    .filter((run) => run.queueRank !== null)
    .sort((a, b) => a.queueRank! - b.queueRank!)
    .map((run) => ({ runId: run.id, held: run.held }));
}
