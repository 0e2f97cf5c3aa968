import type {
  GuestMessageDismissCommand,
  GuestMessageSubmitCommand,
  GuestShareCloseCommand,
  GuestShareOpenCommand,
  GuestShareRedeemCommand,
} from "../../contracts/commands/guestShareCommands.js";
import {
  GUEST_ATTACHMENT_LIMIT,
  GUEST_ATTACHMENT_MAX_BYTES,
  GUEST_ATTACHMENT_TYPES,
  GUEST_MESSAGE_MAX_LENGTH,
  type GuestAttachment,
  GUEST_NAME_MAX_LENGTH,
  GUEST_PENDING_MESSAGE_LIMIT,
  GUEST_SHARE_TTL_MS,
  type GuestMessage,
  type ThreadGuestShare,
  isShareLive,
} from "../../contracts/entities/guestShares.js";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, type Rejected, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "../thread/guards.js";

/**
 * Live guest share (spec 004 §3.4, docs/guest-share.md). The share lives on
 * its thread (`thread.guestShare`) and every change is one
 * thread.guest-share-updated event carrying the whole thread. Decisions read
 * the clock only through ctx.now, so a share expires at GUEST_SHARE_TTL_MS
 * after it was opened in every replay alike.
 */

export function decideGuestShareOpen(state: OrchestrationState, command: GuestShareOpenCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (isShareLive(thread.guestShare, ctx.now)) {
    return reject(RejectionCode.guestShareAlreadyOpen, `thread ${thread.id} already has an open guest share; close it before opening another`);
  }
  const share: ThreadGuestShare = {
    shareId: command.data.shareId,
    openedAt: ctx.now,
    expiresAt: new Date(Date.parse(ctx.now) + GUEST_SHARE_TTL_MS).toISOString(),
    closedAt: null,
    guest: null,
    messages: [],
  };
  return updated(thread, ctx, share);
}

/** Closing ends the share at once; the guest's pending messages stay in the owner's inbox until sent or dismissed. */
export function decideGuestShareClose(state: OrchestrationState, command: GuestShareCloseCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const share = found.thread.guestShare;
  if (!isShareLive(share, ctx.now)) return reject(RejectionCode.guestShareNotOpen, `thread ${found.thread.id} has no open guest share`);
  return updated(found.thread, ctx, { ...share, closedAt: ctx.now });
}

/**
 * The first browser to redeem a link binds it; the same browser redeeming
 * again (a reload) is accepted with nothing changed, any other is refused.
 */
export function decideGuestShareRedeem(state: OrchestrationState, command: GuestShareRedeemCommand, ctx: DecideContext): Decision {
  const open = openShare(state, command.data.threadId, command.data.shareId, ctx);
  if (open.kind === "rejected") return open;
  const { thread, share } = open;
  if (share.guest !== null) {
    if (share.guest.browserHash === command.data.browserHash) return accept([]);
    return reject(RejectionCode.guestShareTaken, `the guest share of thread ${thread.id} was redeemed by another browser`);
  }
  const name = command.data.guestName.trim();
  if (name.length === 0 || [...name].length > GUEST_NAME_MAX_LENGTH) {
    return reject(RejectionCode.invalidGuestName, `a guest name is 1 to ${GUEST_NAME_MAX_LENGTH} characters`);
  }
  return updated(thread, ctx, { ...share, guest: { name, browserHash: command.data.browserHash, redeemedAt: ctx.now } });
}

export function decideGuestMessageSubmit(state: OrchestrationState, command: GuestMessageSubmitCommand, ctx: DecideContext): Decision {
  const open = openShare(state, command.data.threadId, command.data.shareId, ctx);
  if (open.kind === "rejected") return open;
  const { thread, share } = open;
  if (share.guest === null || share.guest.browserHash !== command.data.browserHash) {
    return reject(RejectionCode.guestShareTaken, `the guest share of thread ${thread.id} is bound to another browser`);
  }
  if (share.messages.some((message) => message.id === command.data.guestMessageId)) return accept([]);
  const text = command.data.text.trim();
  if (text.length === 0 || text.length > GUEST_MESSAGE_MAX_LENGTH) {
    return reject(RejectionCode.invalidGuestMessage, `a guest message is 1 to ${GUEST_MESSAGE_MAX_LENGTH} characters, got ${text.length}`);
  }
  const attachments = command.data.attachments ?? [];
  const badAttachment = attachmentProblem(attachments);
  if (badAttachment !== null) return reject(RejectionCode.invalidGuestAttachment, badAttachment);
  const pending = share.messages.filter((message) => message.status === "pending").length;
  if (pending >= GUEST_PENDING_MESSAGE_LIMIT) {
    return reject(RejectionCode.guestMessageLimit, `a guest may have at most ${GUEST_PENDING_MESSAGE_LIMIT} messages waiting for the owner`);
  }
  const message: GuestMessage = { id: command.data.guestMessageId, text, status: "pending", submittedAt: ctx.now, decidedAt: null, runId: null, ...(attachments.length === 0 ? {} : { attachments }) };
  return updated(thread, ctx, { ...share, messages: [...share.messages, message] });
}

/** Why a guest message's attachments are refused, or null: spec 004's limits and the accepted types. */
export function attachmentProblem(attachments: readonly Pick<GuestAttachment, "name" | "type" | "size">[]): string | null {
  if (attachments.length > GUEST_ATTACHMENT_LIMIT) return `a guest message has at most ${GUEST_ATTACHMENT_LIMIT} attachments, got ${attachments.length}`;
  for (const attachment of attachments) {
    if (attachment.size > GUEST_ATTACHMENT_MAX_BYTES) return `attachment ${attachment.name} is ${attachment.size} bytes; at most ${GUEST_ATTACHMENT_MAX_BYTES} (10 MiB) are accepted`;
    if (!GUEST_ATTACHMENT_TYPES.includes(attachment.type)) return `attachment ${attachment.name} is of type ${attachment.type}; accepted: ${GUEST_ATTACHMENT_TYPES.join(", ")}`;
  }
  return null;
}

export function decideGuestMessageDismiss(state: OrchestrationState, command: GuestMessageDismissCommand, ctx: DecideContext): Decision {
  const found = pendingGuestMessage(state, command.data.threadId, command.data.guestMessageId);
  if (found.kind === "rejected") return found;
  return updated(found.thread, ctx, withMessage(found.share, { ...found.message, status: "dismissed", decidedAt: ctx.now }));
}

/** A pending guest message of the thread's share (open or not: closing a share leaves its messages to the owner). */
export function pendingGuestMessage(
  state: OrchestrationState,
  threadId: string,
  guestMessageId: string,
): { kind: "found"; thread: AppThread; share: ThreadGuestShare; message: GuestMessage } | Rejected {
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const share = found.thread.guestShare;
  const message = share?.messages.find((candidate) => candidate.id === guestMessageId);
  if (share === null || share === undefined || message === undefined) {
    return reject(RejectionCode.guestMessageNotFound, `thread ${threadId} has no guest message ${guestMessageId}`);
  }
  if (message.status !== "pending") return reject(RejectionCode.guestMessageNotPending, `guest message ${guestMessageId} was already ${message.status}`);
  return { kind: "found", thread: found.thread, share, message };
}

/** The share with one message replaced. */
export function withMessage(share: ThreadGuestShare, message: GuestMessage): ThreadGuestShare {
  return { ...share, messages: share.messages.map((candidate) => (candidate.id === message.id ? message : candidate)) };
}

/** The thread's share under `shareId` while it is live; every other case is the same rejection. */
function openShare(state: OrchestrationState, threadId: string, shareId: string, ctx: DecideContext): { kind: "found"; thread: AppThread; share: ThreadGuestShare } | Rejected {
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const share = found.thread.guestShare;
  if (!isShareLive(share, ctx.now) || share.shareId !== shareId) return reject(RejectionCode.guestShareNotOpen, `no guest share ${shareId} is open`);
  return { kind: "found", thread: found.thread, share };
}

function updated(thread: AppThread, ctx: DecideContext, guestShare: ThreadGuestShare): Decision {
  return accept([threadEvent("thread.guest-share-updated", changed(thread, ctx, { guestShare }))]);
}
