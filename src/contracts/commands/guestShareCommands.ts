import { z } from "zod";
import { GUEST_ATTACHMENT_LIMIT, GUEST_MESSAGE_MAX_LENGTH, GuestAttachmentSchema } from "../entities/guestShares.js";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * Live guest share commands (spec 004 §3.4, docs/guest-share.md). open,
 * redeem and submit are internal: the server's owner and guest routes send
 * them. close and dismiss are the owner's public commands.
 */
const BrowserHashSchema = z.string().regex(/^[0-9a-f]{64}$/);

/** Open a share of the thread; `shareId` is fresh and random (the app mints it), the link is signed outside the log. */
export const GuestShareOpenCommandSchema = command("thread.guest-share.open", z.object({ threadId: IdSchema, shareId: IdSchema }).strict());

/** Close the thread's open share at once. */
export const GuestShareCloseCommandSchema = command("thread.guest-share.close", z.object({ threadId: IdSchema }).strict());

/** Bind the share to one guest browser (by its cookie's hash) under the guest's name (trimmed, 1 to 40 characters: the decider checks). */
export const GuestShareRedeemCommandSchema = command(
  "thread.guest-share.redeem",
  z.object({ threadId: IdSchema, shareId: IdSchema, guestName: z.string().min(1).max(200), browserHash: BrowserHashSchema }).strict(),
);

/** A guest's message for the owner's inbox (trimmed, 1 to 4,000 characters: the decider checks). */
export const GuestMessageSubmitCommandSchema = command(
  "thread.guest-message.submit",
  z
    .object({
      threadId: IdSchema,
      shareId: IdSchema,
      browserHash: BrowserHashSchema,
      guestMessageId: IdSchema,
      text: z.string().max(GUEST_MESSAGE_MAX_LENGTH * 2),
      /** Described only: the app stored the bytes before sending this. */
      attachments: z.array(GuestAttachmentSchema).max(GUEST_ATTACHMENT_LIMIT * 2).optional(),
    })
    .strict(),
);

/** The owner rejects a pending guest message. */
export const GuestMessageDismissCommandSchema = command("thread.guest-message.dismiss", z.object({ threadId: IdSchema, guestMessageId: IdSchema }).strict());

export type GuestShareOpenCommand = z.infer<typeof GuestShareOpenCommandSchema>;
export type GuestShareCloseCommand = z.infer<typeof GuestShareCloseCommandSchema>;
export type GuestShareRedeemCommand = z.infer<typeof GuestShareRedeemCommandSchema>;
export type GuestMessageSubmitCommand = z.infer<typeof GuestMessageSubmitCommandSchema>;
export type GuestMessageDismissCommand = z.infer<typeof GuestMessageDismissCommandSchema>;
