import { z } from "zod";
import { TodoStatus } from "../turnItemParts.js";
import { CountSchema, EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * The message and plan records of spec 004's `message.updated` and
 * `plan.updated` (docs/wire.md, "Messages and plans"): a message or a plan
 * followed by its own id. Each is committed beside the `turn-item.updated`
 * event of the same decision that carries its item, so the record holds the
 * entity's identity and state but not its body: the text (and the plan's
 * markdown and step texts) is read from the turn item `turnItemId` names.
 * That keeps the event log from holding every body twice.
 */

export const MessageRole = { user: "user", assistant: "assistant" } as const;
export type MessageRole = (typeof MessageRole)[keyof typeof MessageRole];

export const MessageStatus = { streaming: "streaming", completed: "completed" } as const;
export type MessageStatus = (typeof MessageStatus)[keyof typeof MessageStatus];

export const MessageRecordSchema = z
  .object({
    messageId: EntityIdSchema,
    threadId: EntityIdSchema,
    runId: NullableEntityIdSchema,
    /** The `user_message` or `assistant_message` item holding the text. */
    turnItemId: EntityIdSchema,
    role: z.enum(MessageRole),
    /** `streaming` while the provider is still appending text (an assistant message's coarse checkpoints). */
    status: z.enum(MessageStatus),
    /** The text's length in UTF-16 code units, as the item holds it now: a client can tell a change it has not read. */
    length: CountSchema,
  })
  .strict();
export type MessageRecord = z.infer<typeof MessageRecordSchema>;

export const PlanRecordSchema = z
  .object({
    planId: EntityIdSchema,
    threadId: EntityIdSchema,
    runId: NullableEntityIdSchema,
    /** The `proposed_plan` item holding the markdown and the steps' texts. */
    turnItemId: EntityIdSchema,
    title: z.string().nullable(),
    /** Each step's status, in the item's step order. */
    stepStatuses: z.array(z.enum(TodoStatus)),
  })
  .strict();
export type PlanRecord = z.infer<typeof PlanRecordSchema>;
