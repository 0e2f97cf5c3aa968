import { z } from "zod";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { CreatedBySchema, CreationSourceSchema, ModelSelectionSchema } from "../thread.js";

const CommandIdSchema = z.string().min(1).max(256);
const ThreadIdSchema = z.string().min(1).max(512);

/** Build a command schema: readonly `{ type, commandId, data }`. */
function command<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), commandId: CommandIdSchema, data }).strict();
}

export const ThreadCreateCommandSchema = command(
  "thread.create",
  z
    .object({
      threadId: ThreadIdSchema.optional(),
      projectId: z.string().min(1),
      title: z.string().max(500).optional(),
      modelSelection: ModelSelectionSchema.optional(),
      runtimeMode: RuntimeModeSchema.optional(),
      interactionMode: InteractionModeSchema.optional(),
      worktreePath: z.string().min(1).optional(),
      branch: z.string().min(1).optional(),
      createdBy: CreatedBySchema.optional(),
      creationSource: CreationSourceSchema.optional(),
    })
    .strict(),
);
export type ThreadCreateCommand = z.infer<typeof ThreadCreateCommandSchema>;

/** Commands that name only their thread. */
const threadOnly = z.object({ threadId: ThreadIdSchema }).strict();
export const ThreadArchiveCommandSchema = command("thread.archive", threadOnly);
export type ThreadArchiveCommand = z.infer<typeof ThreadArchiveCommandSchema>;

/** Every thread lifecycle/organization command schema, in one list for the union. */
export const THREAD_COMMAND_SCHEMAS = [ThreadCreateCommandSchema, ThreadArchiveCommandSchema] as const;
export type ThreadCommand = ThreadCreateCommand | ThreadArchiveCommand;
