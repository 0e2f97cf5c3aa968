import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { RunKindSchema } from "../entities/runs.js";
import { ApprovalDecisionSchema, UserInputAnswersSchema } from "../turnItemParts.js";
import { CreatedBySchema, CreationSourceSchema } from "../thread.js";
import { CeilingSchema } from "../modes.js";

/** Largest message accepted into a thread, in characters. */
export const MAX_MESSAGE_LENGTH = 200_000;

/**
 * How a message reaches a thread (spec 000, t3_thread_send): `auto` starts an
 * idle thread, steers a steerable running turn, or queues; `queue` always
 * makes a follow-up run; `steer` needs a steerable running turn; `restart`
 * interrupts the running turn and runs the message next.
 */
export const SendModeSchema = z.enum(["auto", "queue", "steer", "restart"]);
export type SendMode = z.infer<typeof SendModeSchema>;

export const MessageDispatchCommandSchema = command(
  "message.dispatch",
  z
    .object({
      threadId: IdSchema,
      text: z.string().min(1).max(MAX_MESSAGE_LENGTH),
      mode: SendModeSchema.optional(),
      /** Stable ids make a retried send land on the same message and run. */
      messageId: IdSchema.optional(),
      runId: IdSchema.optional(),
      runKind: RunKindSchema.optional(),
      createdBy: CreatedBySchema.optional(),
      creationSource: CreationSourceSchema.optional(),
      /** The caller whose modes the thread may not exceed (src/core/policy/ceiling.ts); absent: none. */
      ceiling: CeilingSchema.optional(),
      /**
       * Send a guest's pending message (docs/guest-share.md): `text` must be
       * the guest's text; the agent receives it prefixed with who wrote it.
       */
      guestMessageId: IdSchema.optional(),
      /** With guestMessageId: the directory the message's attachments are kept in, named to the agent. */
      guestAttachmentsDir: z.string().min(1).optional(),
    })
    .strict(),
);

export const RunInterruptCommandSchema = command(
  "run.interrupt",
  z.object({ threadId: IdSchema, runId: IdSchema.optional(), reason: z.string().max(2_000).optional(), requestedBy: CreatedBySchema.optional(), ceiling: CeilingSchema.optional() }).strict(),
);
export const ThreadStopCommandSchema = command("thread.stop", z.object({ threadId: IdSchema, reason: z.string().max(2_000).optional() }).strict());
export const QueueResumeCommandSchema = command("queue.resume", z.object({ threadId: IdSchema }).strict());
export const QueuedRunStartCommandSchema = command("queued-run.start", z.object({ threadId: IdSchema, runId: IdSchema }).strict());
export const QueuedRunReorderCommandSchema = command(
  "queued-run.reorder",
  z.object({ threadId: IdSchema, runIds: z.array(IdSchema).max(1_000), ceiling: CeilingSchema.optional() }).strict(),
);
export const QueuedRunCancelCommandSchema = command("queued-run.cancel", z.object({ threadId: IdSchema, runId: IdSchema, ceiling: CeilingSchema.optional() }).strict());
export const QueuedRunEditCommandSchema = command(
  "queued-run.edit",
  z.object({ threadId: IdSchema, runId: IdSchema, text: z.string().min(1).max(MAX_MESSAGE_LENGTH), ceiling: CeilingSchema.optional() }).strict(),
);
export const QueuedMessagePromoteToSteerCommandSchema = command(
  "queued-message.promote-to-steer",
  z.object({ threadId: IdSchema, runId: IdSchema, ceiling: CeilingSchema.optional() }).strict(),
);

/** An approval takes a decision; a question takes answers keyed by question id. */
export const RuntimeResponseSchema = z.union([
  z.object({ decision: ApprovalDecisionSchema }).strict(),
  z.object({ answers: UserInputAnswersSchema }).strict(),
]);
export type RuntimeResponse = z.infer<typeof RuntimeResponseSchema>;

export const RuntimeRequestRespondCommandSchema = command(
  "runtime-request.respond",
  z.object({ threadId: IdSchema, requestId: IdSchema, response: RuntimeResponseSchema, ceiling: CeilingSchema.optional() }).strict(),
);
/**
 * An answer (or a dismissal) that could not reach the provider's callback.
 * `callbackGone` says the callback itself is gone (no live session, no
 * provider id), so the request expires; otherwise it is open again.
 */
export const RuntimeRequestDeliveryFailCommandSchema = command(
  "runtime-request.delivery.fail",
  z.object({ threadId: IdSchema, requestId: IdSchema, reason: z.string().min(1).max(2_000), callbackGone: z.boolean() }).strict(),
);
/**
 * thread.background-work.settle (spec 004, internal): settle a run in
 * settling_background_work. Its work is over, or, with `timedOut`, Loom
 * stopped waiting for it at the run's backgroundSettleBy: the work still
 * pending is cancelled and the run completes with a notice.
 */
export const ThreadBackgroundWorkSettleCommandSchema = command(
  "thread.background-work.settle",
  z.object({ threadId: IdSchema, runId: IdSchema, timedOut: z.boolean() }).strict(),
);
export const ThreadUserInputDismissCommandSchema = command(
  "thread.user-input.dismiss",
  z.object({ threadId: IdSchema, requestId: IdSchema, ceiling: CeilingSchema.optional() }).strict(),
);
export const ProviderSessionDetachCommandSchema = command(
  "provider-session.detach",
  z.object({ threadId: IdSchema, reason: z.string().max(2_000).optional() }).strict(),
);

export type MessageDispatchCommand = z.infer<typeof MessageDispatchCommandSchema>;
export type RunInterruptCommand = z.infer<typeof RunInterruptCommandSchema>;
export type RuntimeRequestDeliveryFailCommand = z.infer<typeof RuntimeRequestDeliveryFailCommandSchema>;
export type ThreadBackgroundWorkSettleCommand = z.infer<typeof ThreadBackgroundWorkSettleCommandSchema>;
export type ThreadStopCommand = z.infer<typeof ThreadStopCommandSchema>;
export type QueueResumeCommand = z.infer<typeof QueueResumeCommandSchema>;
export type QueuedRunStartCommand = z.infer<typeof QueuedRunStartCommandSchema>;
export type QueuedRunReorderCommand = z.infer<typeof QueuedRunReorderCommandSchema>;
export type QueuedRunCancelCommand = z.infer<typeof QueuedRunCancelCommandSchema>;
export type QueuedRunEditCommand = z.infer<typeof QueuedRunEditCommandSchema>;
export type QueuedMessagePromoteToSteerCommand = z.infer<typeof QueuedMessagePromoteToSteerCommandSchema>;
export type RuntimeRequestRespondCommand = z.infer<typeof RuntimeRequestRespondCommandSchema>;
export type ThreadUserInputDismissCommand = z.infer<typeof ThreadUserInputDismissCommandSchema>;
export type ProviderSessionDetachCommand = z.infer<typeof ProviderSessionDetachCommandSchema>;
