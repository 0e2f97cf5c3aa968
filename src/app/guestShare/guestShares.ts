import { createHash, randomBytes } from "node:crypto";
import { GUEST_MESSAGE_MAX_LENGTH, type GuestAttachment, type ThreadGuestShare, isShareLive, type GuestShareLink } from "../../contracts/entities/guestShares.js";
import type { MessageDispatchCommand } from "../../contracts/commands/runCommands.js";
import type { AppThread } from "../../contracts/thread.js";
import { activeRunOf } from "../../engine/queries.js";
import type { Caller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { attachmentProblem } from "../../core/guestShare/guestShare.js";
import { AppError, fail } from "../errors.js";
import { liveThreadOrFail } from "../threads/authorize.js";
import { type GuestUpload, attachmentPath, contentProblem, describeUploads, removeAttachments, shareAttachmentsDir, storeUploads } from "./guestAttachments.js";
import { type GuestView, guestView } from "./guestView.js";
import { type GuestShareKey, freshShareId } from "./shareKey.js";

/**
 * Live guest share (docs/guest-share.md): the owner's operations (open,
 * close, read, send or dismiss a guest's message) take a Caller and refuse
 * agents; the guest's (redeem, view, submit) take the link token and the
 * guest browser's cookie value, and every way a link can be bad (forged,
 * expired, closed, replaced, bound to another browser) ends in the one
 * GUEST_LINK_REFUSED answer, so a guest learns nothing of which.
 */
export interface GuestShareSettings {
  readonly key: GuestShareKey;
  /** The server's URL, read when a link is handed out. */
  readonly baseUrl: () => string;
  /** Where guest attachments are kept (`<state-dir>/guest-attachments`); absent: a guest message is text only. */
  readonly attachmentsDir?: string;
}

/** The path of a share's guest page: the cookie is scoped to it. */
export function guestPagePath(token: string): string {
  return `/g/${token}`;
}

export type { GuestShareLink };

export interface OwnerGuestShare {
  readonly threadId: string;
  /** The link while the share is open; null once closed or expired. */
  readonly link: GuestShareLink | null;
  readonly guestName: string | null;
  readonly messages: ThreadGuestShare["messages"];
}

const REFUSED_MESSAGE = "this guest link is not valid: it may have expired, been closed or been opened in another browser";

/** The one answer to every bad guest link or browser. */
export function refused(): AppError {
  return new AppError("capability_denied", REFUSED_MESSAGE, { details: { reason: "guest_link_refused" } });
}

function settings(ctx: AppContext): GuestShareSettings {
  return ctx.guestShares ?? fail("unsupported", "this server has no guest share key");
}

function ownerOnly(caller: Caller): void {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner shares a thread with a guest");
}

function now(ctx: AppContext): string {
  return new Date(ctx.clock()).toISOString();
}

function linkOf(ctx: AppContext, thread: AppThread, share: ThreadGuestShare): GuestShareLink {
  const { key, baseUrl } = settings(ctx);
  return { threadId: thread.id, url: `${baseUrl()}${guestPagePath(key.token(share.shareId))}`, expiresAt: share.expiresAt };
}

function commandId(ctx: AppContext): string {
  return `cmd:${freshUuid(ctx)}`;
}

/** Open a share of the thread, or hand back the link of the one already open. */
export async function openGuestShare(ctx: AppContext, caller: Caller, input: { readonly threadId: string }): Promise<GuestShareLink> {
  ownerOnly(caller);
  settings(ctx);
  const thread = liveThreadOrFail(ctx, input.threadId);
  if (isShareLive(thread.guestShare, now(ctx))) return linkOf(ctx, thread, thread.guestShare);
  await execute(ctx, { type: "thread.guest-share.open", commandId: commandId(ctx), data: { threadId: thread.id, shareId: freshShareId() } });
  const opened = liveThreadOrFail(ctx, thread.id);
  return linkOf(ctx, opened, opened.guestShare!);
}

/** Close the thread's share at once: its guest's page and live stream end. */
export async function closeGuestShare(ctx: AppContext, caller: Caller, input: { readonly threadId: string }): Promise<{ readonly threadId: string; readonly closedAt: string }> {
  ownerOnly(caller);
  const thread = liveThreadOrFail(ctx, input.threadId);
  await execute(ctx, { type: "thread.guest-share.close", commandId: commandId(ctx), data: { threadId: thread.id } });
  return { threadId: thread.id, closedAt: liveThreadOrFail(ctx, thread.id).guestShare?.closedAt ?? now(ctx) };
}

/** The thread's share as the owner sees it: the link while open, the guest, every guest message. */
export function readGuestShare(ctx: AppContext, caller: Caller, input: { readonly threadId: string }): OwnerGuestShare {
  ownerOnly(caller);
  const thread = liveThreadOrFail(ctx, input.threadId);
  const share = thread.guestShare ?? null;
  return {
    threadId: thread.id,
    link: isShareLive(share, now(ctx)) ? linkOf(ctx, thread, share) : null,
    guestName: share?.guest?.name ?? null,
    messages: share?.messages ?? [],
  };
}

/** The guest messages waiting for the owner, on every thread (the web UI's inbox). */
export function listGuestMessages(ctx: AppContext, caller: Caller): {
  readonly messages: readonly { threadId: string; threadTitle: string; guestName: string; id: string; text: string; attachments: readonly GuestAttachment[]; submittedAt: string }[];
} {
  ownerOnly(caller);
  const messages = [];
  for (const thread of ctx.orchestrator.state.threads.values()) {
    const share = thread.guestShare;
    if (thread.deletedAt !== null || share === null || share === undefined) continue;
    for (const message of share.messages) {
      if (message.status === "pending") messages.push({ threadId: thread.id, threadTitle: thread.title, guestName: share.guest?.name ?? "guest", id: message.id, text: message.text, attachments: message.attachments ?? [], submittedAt: message.submittedAt });
    }
  }
  return { messages: messages.sort((a, b) => a.submittedAt.localeCompare(b.submittedAt)) };
}

/** Send a guest's pending message to the thread's agent (message.dispatch with guestMessageId). */
export async function sendGuestMessage(
  ctx: AppContext,
  caller: Caller,
  input: { readonly threadId: string; readonly guestMessageId: string; readonly mode?: NonNullable<MessageDispatchCommand["data"]["mode"]> },
): Promise<{ readonly threadId: string; readonly guestMessageId: string; readonly runId: string | null }> {
  ownerOnly(caller);
  const thread = liveThreadOrFail(ctx, input.threadId);
  const message = thread.guestShare?.messages.find((candidate) => candidate.id === input.guestMessageId);
  if (message === undefined) fail("invalid_request", `thread ${thread.id} has no guest message ${input.guestMessageId}`);
  await execute(ctx, {
    type: "message.dispatch",
    commandId: commandId(ctx),
    data: {
      threadId: thread.id,
      text: message.text,
      mode: input.mode ?? "auto",
      guestMessageId: message.id,
      ...guestAttachmentsDirOf(ctx, thread.guestShare!.shareId, message.attachments),
      createdBy: "user",
      creationSource: "ui",
    },
  });
  const sent = liveThreadOrFail(ctx, thread.id).guestShare?.messages.find((candidate) => candidate.id === message.id);
  return { threadId: thread.id, guestMessageId: message.id, runId: sent?.runId ?? null };
}

export async function dismissGuestMessage(ctx: AppContext, caller: Caller, input: { readonly threadId: string; readonly guestMessageId: string }): Promise<{ readonly threadId: string; readonly guestMessageId: string }> {
  ownerOnly(caller);
  const thread = liveThreadOrFail(ctx, input.threadId);
  await execute(ctx, { type: "thread.guest-message.dismiss", commandId: commandId(ctx), data: { threadId: thread.id, guestMessageId: input.guestMessageId } });
  const dismissed = thread.guestShare?.messages.find((candidate) => candidate.id === input.guestMessageId);
  const root = ctx.guestShares?.attachmentsDir;
  if (root !== undefined && dismissed?.attachments !== undefined) await removeAttachments(root, thread.guestShare!.shareId, dismissed.attachments);
  return { threadId: thread.id, guestMessageId: input.guestMessageId };
}

function guestAttachmentsDirOf(ctx: AppContext, shareId: string, attachments: readonly GuestAttachment[] | undefined): { guestAttachmentsDir?: string } {
  const root = ctx.guestShares?.attachmentsDir;
  if (root === undefined || attachments === undefined || attachments.length === 0) return {};
  return { guestAttachmentsDir: shareAttachmentsDir(root, shareId) };
}

function firstProblem(uploads: readonly GuestUpload[]): string | null {
  for (const upload of uploads) {
    const problem = contentProblem(upload);
    if (problem !== null) return problem;
  }
  return null;
}

/** One attachment of a guest message, for the owner: its description and the file holding its bytes. */
export function readGuestAttachment(
  ctx: AppContext,
  caller: Caller,
  input: { readonly threadId: string; readonly guestMessageId: string; readonly attachmentId: string },
): { readonly attachment: GuestAttachment; readonly path: string } {
  ownerOnly(caller);
  const thread = liveThreadOrFail(ctx, input.threadId);
  const share = thread.guestShare;
  const message = share?.messages.find((candidate) => candidate.id === input.guestMessageId);
  // A dismissed message's files are removed.
  const attachment = message?.status === "dismissed" ? undefined : message?.attachments?.find((candidate) => candidate.id === input.attachmentId);
  const root = ctx.guestShares?.attachmentsDir;
  if (share === null || share === undefined || attachment === undefined || root === undefined) {
    fail("invalid_request", `thread ${thread.id} has no attachment ${input.attachmentId} on guest message ${input.guestMessageId}`);
  }
  return { attachment, path: attachmentPath(root, share.shareId, attachment.id) };
}

// The guest's side.

/** What the guest's browser proves: the link token and, once redeemed, its cookie value. */
export interface GuestCredentials {
  readonly token: string;
  readonly browserToken: string | null;
}

function browserHashOf(browserToken: string): string {
  return createHash("sha256").update(browserToken, "utf8").digest("hex");
}

/** The thread and its live share a token names, or the one refusal. */
function sharedThread(ctx: AppContext, token: string): { thread: AppThread; share: ThreadGuestShare } {
  const shareId = settings(ctx).key.shareIdOf(token);
  if (shareId === null) throw refused();
  for (const thread of ctx.orchestrator.state.threads.values()) {
    const share = thread.guestShare;
    if (share?.shareId === shareId && thread.deletedAt === null && isShareLive(share, now(ctx))) return { thread, share };
  }
  throw refused();
}

/** The share as its bound browser may use it, or the one refusal. */
function guestThread(ctx: AppContext, credentials: GuestCredentials): { thread: AppThread; share: ThreadGuestShare; browserHash: string } {
  const found = sharedThread(ctx, credentials.token);
  if (credentials.browserToken === null || found.share.guest === null) throw refused();
  const browserHash = browserHashOf(credentials.browserToken);
  if (found.share.guest.browserHash !== browserHash) throw refused();
  return { ...found, browserHash };
}

/**
 * Redeem a link: the first browser binds the share under the guest's name and
 * gets its cookie value; the same browser again keeps its value; any other is
 * refused. A bad name is the one answer that says what is wrong.
 */
export async function redeemGuestLink(ctx: AppContext, input: GuestCredentials & { readonly guestName: string }): Promise<{ readonly browserToken: string }> {
  const { thread, share } = sharedThread(ctx, input.token);
  const browserToken = input.browserToken ?? randomBytes(32).toString("base64url");
  const browserHash = browserHashOf(browserToken);
  if (share.guest !== null && share.guest.browserHash !== browserHash) throw refused();
  try {
    await execute(ctx, { type: "thread.guest-share.redeem", commandId: commandId(ctx), data: { threadId: thread.id, shareId: share.shareId, guestName: input.guestName.slice(0, 200), browserHash } });
  } catch (error) {
    if (error instanceof AppError && error.rejectionCode === "invalid_guest_name") throw error;
    throw refused();
  }
  return { browserToken };
}

export function readGuestView(ctx: AppContext, credentials: GuestCredentials): GuestView {
  const { thread, share } = guestThread(ctx, credentials);
  return guestView(ctx.orchestrator.timeline, thread, share, activeRunOf(ctx.orchestrator.state, thread.id) !== null);
}

/**
 * A guest's message for the owner. Its attachments are checked (count, size,
 * type) before anything is written, stored, and then described in the
 * command; a refused command removes the files it stored, so a refused
 * submit leaves neither a file nor an event.
 */
export async function submitGuestMessage(
  ctx: AppContext,
  credentials: GuestCredentials,
  input: { readonly text: string; readonly attachments?: readonly GuestUpload[] },
): Promise<{ readonly guestMessageId: string }> {
  const { thread, share, browserHash } = guestThread(ctx, credentials);
  if (input.text.length > GUEST_MESSAGE_MAX_LENGTH * 2) fail("invalid_request", `a guest message is 1 to ${GUEST_MESSAGE_MAX_LENGTH} characters`);
  const uploads = input.attachments ?? [];
  const root = ctx.guestShares?.attachmentsDir;
  if (uploads.length > 0 && root === undefined) fail("unsupported", "this server keeps no guest attachments");
  const problem = attachmentProblem(uploads.map((upload) => ({ name: upload.name, type: upload.type, size: upload.data.length }))) ?? firstProblem(uploads);
  if (problem !== null) throw new AppError("invalid_request", `invalid_guest_attachment: ${problem}`, { rejectionCode: "invalid_guest_attachment" });
  const attachments = describeUploads(uploads);
  const guestMessageId = `guest-message:${freshUuid(ctx)}`;
  try {
    if (root !== undefined && uploads.length > 0) await storeUploads(root, share.shareId, uploads, attachments);
    await execute(ctx, {
      type: "thread.guest-message.submit",
      commandId: commandId(ctx),
      data: { threadId: thread.id, shareId: share.shareId, browserHash, guestMessageId, text: input.text, ...(attachments.length === 0 ? {} : { attachments }) },
    });
  } catch (error) {
    if (root !== undefined) await removeAttachments(root, share.shareId, attachments);
    throw error;
  }
  return { guestMessageId };
}

export interface GuestViewSink {
  next(view: GuestView): void;
  /** The share ended (closed, expired, replaced): nothing more comes. */
  end(): void;
}

/**
 * The guest's live view: the view now, then again after every committed
 * change of that one thread, until the share ends. Only the shared thread's
 * events wake it; nothing of any other thread is read.
 */
export function followGuestView(ctx: AppContext, credentials: GuestCredentials, sink: GuestViewSink): { close(): void } {
  const { thread } = guestThread(ctx, credentials);
  const { orchestrator } = ctx;
  let closed = false;
  let scheduled = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(expiry);
    subscription.close();
  };
  const render = () => {
    scheduled = false;
    if (closed) return;
    let view: GuestView;
    try {
      view = readGuestView(ctx, credentials);
    } catch {
      close();
      sink.end();
      return;
    }
    sink.next(view);
  };
  const share = thread.guestShare!;
  const expiry = setTimeout(render, Math.max(0, Date.parse(share.expiresAt) - ctx.clock()) + 1);
  expiry.unref();
  const subscription = orchestrator.follow(orchestrator.state.lastSequence, (event) => {
    if (closed || event.streamId !== thread.id || scheduled) return;
    scheduled = true;
    setImmediate(render);
  });
  render();
  return { close };
}
