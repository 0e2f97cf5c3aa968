import { z } from "zod";

/**
 * Live guest share (spec 004 §3.4, docs/guest-share.md): a signed link that
 * lets one guest browser watch a thread and suggest messages the owner sends
 * or dismisses. The limits are spec 004's.
 */

/** How long a share link stays valid after it is opened: 24 hours. */
export const GUEST_SHARE_TTL_MS = 86_400_000;
/** A guest's name: 1 to 40 characters after trimming. */
export const GUEST_NAME_MAX_LENGTH = 40;
/** Guest messages waiting for the owner at once. */
export const GUEST_PENDING_MESSAGE_LIMIT = 3;
/** Characters in one guest message. */
export const GUEST_MESSAGE_MAX_LENGTH = 4_000;
/** Attachments on one guest message. */
export const GUEST_ATTACHMENT_LIMIT = 4;
/** Bytes in one guest attachment: 10 MiB. */
export const GUEST_ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
/** The content types a guest may attach: images, plain text, markdown, CSV, JSON and PDF. */
export const GUEST_ATTACHMENT_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp", "text/plain", "text/markdown", "text/csv", "application/json", "application/pdf"];
/** Rows of the guest's view of the transcript: the newest ones. */
export const SNAPSHOT_ROW_LIMIT = 600;
/** User turns of the guest's view of the transcript: the newest ones. */
export const SNAPSHOT_USER_TURN_LIMIT = 20;

/**
 * What the agent receives when the owner sends a guest's message (spec 004
 * §3.4, GuestShareDecider); with attachments, a list of each one's name and
 * the file it can be read from.
 */
export function guestMessageText(guestName: string, guestText: string, attachments: readonly { readonly name: string; readonly path: string }[] = []): string {
  const text = `Message from guest ${guestName}, sent by the owner:\n\n${guestText}`;
  if (attachments.length === 0) return text;
  return `${text}\n\nAttachments:\n${attachments.map((attachment) => `- ${attachment.name}: ${attachment.path}`).join("\n")}`;
}

/** A file a guest attached: only its description is recorded, its bytes are kept in the state dir. */
export const GuestAttachmentSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  name: z.string().min(1).max(200),
  type: z.string().min(1),
  size: z.number().int().nonnegative(),
  /** hex SHA-256 of the bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type GuestAttachment = z.infer<typeof GuestAttachmentSchema>;

export const GuestMessageStatus = {
  /** Waiting in the owner's inbox. */
  pending: "pending",
  /** The owner sent it (message.dispatch with guestMessageId); `runId` is the run it started or queued. */
  sent: "sent",
  /** The owner dismissed it (thread.guest-message.dismiss). */
  dismissed: "dismissed",
} as const;
export type GuestMessageStatus = (typeof GuestMessageStatus)[keyof typeof GuestMessageStatus];

export const GuestMessageSchema = z.object({
  id: z.string().min(1),
  text: z.string().min(1).max(GUEST_MESSAGE_MAX_LENGTH),
  status: z.enum([GuestMessageStatus.pending, GuestMessageStatus.sent, GuestMessageStatus.dismissed]),
  submittedAt: z.string().min(1),
  /** When the owner sent or dismissed it. */
  decidedAt: z.string().min(1).nullable(),
  runId: z.string().min(1).nullable(),
  /** Absent: none (messages recorded before attachments existed). */
  attachments: z.array(GuestAttachmentSchema).max(GUEST_ATTACHMENT_LIMIT).optional(),
});
export type GuestMessage = z.infer<typeof GuestMessageSchema>;

/** The one browser a share is bound to once redeemed. */
export const GuestSchema = z.object({
  name: z.string().min(1).max(GUEST_NAME_MAX_LENGTH),
  /** hex SHA-256 of the guest browser's cookie value: the value itself is never recorded. */
  browserHash: z.string().regex(/^[0-9a-f]{64}$/),
  redeemedAt: z.string().min(1),
});
export type Guest = z.infer<typeof GuestSchema>;

/**
 * A thread's guest share (spec 004 §2, ThreadGuestShare). The link's HMAC is
 * never recorded: it is computed from `shareId` with the server's key.
 */
export const ThreadGuestShareSchema = z.object({
  shareId: z.string().min(1),
  openedAt: z.string().min(1),
  expiresAt: z.string().min(1),
  closedAt: z.string().min(1).nullable(),
  guest: GuestSchema.nullable(),
  messages: z.array(GuestMessageSchema),
});
export type ThreadGuestShare = z.infer<typeof ThreadGuestShareSchema>;

/** True while the share's link may be used: not closed and not expired at `now` (ISO time). */
export function isShareLive(share: ThreadGuestShare | null | undefined, now: string): share is ThreadGuestShare {
  return share !== null && share !== undefined && share.closedAt === null && Date.parse(now) < Date.parse(share.expiresAt);
}

/** A live share's link as the owner hands it out (docs/guest-share.md): `<url>/g/<shareId>.<mac>`, valid until `expiresAt` or until closed. */
export interface GuestShareLink {
  readonly threadId: string;
  readonly url: string;
  readonly expiresAt: string;
}
