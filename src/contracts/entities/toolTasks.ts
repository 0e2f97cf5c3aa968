import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * A tool call served as an MCP task (docs/mcp.md, "Tasks"): the durable
 * handle of a task-augmented call. For delegate_task and t3_workflow_start
 * the work is the delegated task or workflow of the same id, and the handle
 * keeps only what the client asked of the task (its ttl and poll interval).
 * A wait (t3_thread_wait, t3_background_wait, t3_thread_send with a wait)
 * has no record of its own, so the handle is its record: what it waits on,
 * fixed when the call was made, as the task-less call would have pinned it.
 */

/** How long a task is kept, and how often a client is told to poll, in milliseconds: requests outside are clamped to these. */
export const TOOL_TASK_BOUNDS = {
  ttlMs: { min: 60_000, max: 7 * 24 * 3_600_000, default: 24 * 3_600_000 },
  pollIntervalMs: { min: 250, max: 60_000, default: 1_000 },
} as const;

const DeliverySchema = z.enum(["started", "steered", "queued", "restarted"]);

/** What the task's work is, by the tool that started it. */
export const ToolTaskWorkSchema = z.discriminatedUnion("tool", [
  z.object({ tool: z.literal("delegate_task") }).strict(),
  z.object({ tool: z.literal("t3_workflow_start") }).strict(),
  /** The run the wait pinned (null: the thread was idle, so the wait ended at once). */
  z.object({ tool: z.literal("t3_thread_wait"), threadId: EntityIdSchema, runId: NullableEntityIdSchema }).strict(),
  /** The delegated tasks unfinished when the wait began. */
  z.object({ tool: z.literal("t3_background_wait"), threadId: EntityIdSchema, taskIds: z.array(EntityIdSchema) }).strict(),
  /** The send's answer; the task waits for its run to end. */
  z
    .object({
      tool: z.literal("t3_thread_send"),
      threadId: EntityIdSchema,
      messageId: NullableEntityIdSchema,
      runId: NullableEntityIdSchema,
      delivery: DeliverySchema,
      commandId: z.string().min(1),
      sequence: z.number().int().nonnegative(),
    })
    .strict(),
]);
export type ToolTaskWork = z.infer<typeof ToolTaskWorkSchema>;
export type ToolTaskTool = ToolTaskWork["tool"];

const { ttlMs, pollIntervalMs } = TOOL_TASK_BOUNDS;

export const ToolTaskSchema = z
  .object({
    taskId: EntityIdSchema,
    /** The thread whose credentials created the task, or null for the owner: only they see it. */
    ownerThreadId: NullableEntityIdSchema,
    work: ToolTaskWorkSchema,
    ttlMs: z.number().int().min(ttlMs.min).max(ttlMs.max),
    pollIntervalMs: z.number().int().min(pollIntervalMs.min).max(pollIntervalMs.max),
    createdAt: IsoTimeSchema,
    /** createdAt + ttlMs: from then on the task is no longer answered (the work's own record stays). */
    expiresAt: IsoTimeSchema,
    updatedAt: IsoTimeSchema,
    /** tasks/cancel of a wait: the wait ends, and nothing it waited on is cancelled. */
    cancelledAt: IsoTimeSchema.nullable(),
  })
  .strict();
export type ToolTask = z.infer<typeof ToolTaskSchema>;
