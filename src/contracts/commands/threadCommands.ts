import { z } from "zod";
import { IdSchema, commandSchema } from "./commandSchema.js";
import { CeilingSchema, InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { CreatedBySchema, CreationSourceSchema, ModelSelectionSchema } from "../thread.js";

const ThreadIdSchema = IdSchema;
/** Titles are at most 500 characters; the decider also rejects a blank one (invalid_title). */
const TitleSchema = z.string().max(500);
/** An ISO-8601 instant; an offset is allowed and is normalized to UTC by the decider. */
const IsoDateTimeSchema = z.iso.datetime({ offset: true });
/** A reorder names at most this many threads. */
const MAX_REORDER_IDS = 10_000;

const command = commandSchema;

// ── Lifecycle ────────────────────────────────────────────────────────────────

export const ThreadCreateCommandSchema = command(
  "thread.create",
  z
    .object({
      threadId: ThreadIdSchema.optional(),
      projectId: z.string().min(1),
      title: TitleSchema.optional(),
      modelSelection: ModelSelectionSchema.optional(),
      runtimeMode: RuntimeModeSchema.optional(),
      interactionMode: InteractionModeSchema.optional(),
      worktreePath: z.string().min(1).optional(),
      branch: z.string().min(1).optional(),
      /** Make the thread a worktree of its own (prepared by its first run); not with worktreePath. */
      workspace: z
        .object({
          strategy: z.literal("worktree"),
          repoPath: z.string().min(1),
          baseRef: z.string().min(1).nullable().optional(),
          startFromOrigin: z.boolean().optional(),
        })
        .strict()
        .optional(),
      /** A JSON Schema the thread's first work must end with an answer matching (checked once, one repair turn). */
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      createdBy: CreatedBySchema.optional(),
      creationSource: CreationSourceSchema.optional(),
      /** The caller whose modes bound the new thread's (src/core/policy/ceiling.ts); absent: none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type ThreadCreateCommand = z.infer<typeof ThreadCreateCommandSchema>;

/**
 * Commands that name only their thread. `ceiling` on a command that changes a
 * thread is the caller whose modes the thread may not exceed
 * (src/core/policy/ceiling.ts); absent: none.
 */
const threadOnly = z.object({ threadId: ThreadIdSchema, ceiling: CeilingSchema.optional() }).strict();

export const ThreadArchiveCommandSchema = command("thread.archive", threadOnly);
export type ThreadArchiveCommand = z.infer<typeof ThreadArchiveCommandSchema>;
export const ThreadUnarchiveCommandSchema = command("thread.unarchive", threadOnly);
export type ThreadUnarchiveCommand = z.infer<typeof ThreadUnarchiveCommandSchema>;
export const ThreadDeleteCommandSchema = command("thread.delete", threadOnly);
export type ThreadDeleteCommand = z.infer<typeof ThreadDeleteCommandSchema>;

// ── Attention: settle, snooze, read state ────────────────────────────────────

export const ThreadSettleCommandSchema = command("thread.settle", threadOnly);
export type ThreadSettleCommand = z.infer<typeof ThreadSettleCommandSchema>;
export const ThreadUnsettleCommandSchema = command("thread.unsettle", threadOnly);
export type ThreadUnsettleCommand = z.infer<typeof ThreadUnsettleCommandSchema>;
/** The system settling a thread whose work finished; only when the thread's autoSettle is on. */
export const ThreadAutoSettleCommandSchema = command("thread.auto-settle", threadOnly);
export type ThreadAutoSettleCommand = z.infer<typeof ThreadAutoSettleCommandSchema>;
export const ThreadAutoSettleSetCommandSchema = command(
  "thread.auto-settle.set",
  z.object({ threadId: ThreadIdSchema, autoSettle: z.boolean(), ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadAutoSettleSetCommand = z.infer<typeof ThreadAutoSettleSetCommandSchema>;
export const ThreadSnoozeCommandSchema = command(
  "thread.snooze",
  z.object({ threadId: ThreadIdSchema, until: IsoDateTimeSchema, ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadSnoozeCommand = z.infer<typeof ThreadSnoozeCommandSchema>;
export const ThreadUnsnoozeCommandSchema = command("thread.unsnooze", threadOnly);
export type ThreadUnsnoozeCommand = z.infer<typeof ThreadUnsnoozeCommandSchema>;
export const ThreadVisitCommandSchema = command("thread.visit", threadOnly);
export type ThreadVisitCommand = z.infer<typeof ThreadVisitCommandSchema>;
export const ThreadMarkUnreadCommandSchema = command("thread.mark-unread", threadOnly);
export type ThreadMarkUnreadCommand = z.infer<typeof ThreadMarkUnreadCommandSchema>;

// ── Ordering: pins and the active list ───────────────────────────────────────

export const ThreadPinCommandSchema = command("thread.pin", threadOnly);
export type ThreadPinCommand = z.infer<typeof ThreadPinCommandSchema>;
export const ThreadUnpinCommandSchema = command("thread.unpin", threadOnly);
export type ThreadUnpinCommand = z.infer<typeof ThreadUnpinCommandSchema>;
/** `threadIds` is the new full order (first = rank 0). */
const reorder = z.object({ threadIds: z.array(ThreadIdSchema).max(MAX_REORDER_IDS), ceiling: CeilingSchema.optional() }).strict();
export const ThreadPinReorderCommandSchema = command("thread.pin.reorder", reorder);
export type ThreadPinReorderCommand = z.infer<typeof ThreadPinReorderCommandSchema>;
export const ThreadActiveReorderCommandSchema = command("thread.active.reorder", reorder);
export type ThreadActiveReorderCommand = z.infer<typeof ThreadActiveReorderCommandSchema>;

// ── Settings: title, pull requests, modes, model ─────────────────────────────

export const ThreadMetadataUpdateCommandSchema = command(
  "thread.metadata.update",
  z
    .object({
      threadId: ThreadIdSchema,
      title: TitleSchema,
      /** True: a title regeneration starts; `title` is shown meanwhile (thread.title.regeneration.complete ends it). */
      titleRegenerating: z.literal(true).optional(),
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type ThreadMetadataUpdateCommand = z.infer<typeof ThreadMetadataUpdateCommandSchema>;
export const ThreadPullRequestLinkCommandSchema = command(
  "thread.pull-request.link",
  z
    .object({
      threadId: ThreadIdSchema,
      url: z.string().url(),
      number: z.number().int().positive().optional(),
      title: z.string().max(500).optional(),
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type ThreadPullRequestLinkCommand = z.infer<typeof ThreadPullRequestLinkCommandSchema>;
export const ThreadPullRequestUnlinkCommandSchema = command(
  "thread.pull-request.unlink",
  z.object({ threadId: ThreadIdSchema, url: z.string().min(1), ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadPullRequestUnlinkCommand = z.infer<typeof ThreadPullRequestUnlinkCommandSchema>;
export const ThreadRuntimeModeSetCommandSchema = command(
  "thread.runtime-mode.set",
  z.object({ threadId: ThreadIdSchema, runtimeMode: RuntimeModeSchema, ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadRuntimeModeSetCommand = z.infer<typeof ThreadRuntimeModeSetCommandSchema>;
export const ThreadInteractionModeSetCommandSchema = command(
  "thread.interaction-mode.set",
  z.object({ threadId: ThreadIdSchema, interactionMode: InteractionModeSchema, ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadInteractionModeSetCommand = z.infer<typeof ThreadInteractionModeSetCommandSchema>;
export const ThreadModelSelectionSetCommandSchema = command(
  "thread.model-selection.set",
  z.object({ threadId: ThreadIdSchema, modelSelection: ModelSelectionSchema.strict(), ceiling: CeilingSchema.optional() }).strict(),
);
export type ThreadModelSelectionSetCommand = z.infer<typeof ThreadModelSelectionSetCommandSchema>;
