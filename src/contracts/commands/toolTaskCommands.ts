import { z } from "zod";
import { ToolTaskSchema } from "../entities/toolTasks.js";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * Tool calls served as MCP tasks (docs/mcp.md, "Tasks"): the app records a
 * task-augmented call's handle once its work is known, and a tasks/cancel of
 * a wait. Loom's own and engine-only, like the recorded waits: the HTTP API
 * refuses their names. A create of a handle that exists for the same owner
 * and tool (a retried call) writes nothing.
 */
export const ToolTaskCreateCommandSchema = command(
  "tool-task.create",
  ToolTaskSchema.pick({ taskId: true, ownerThreadId: true, work: true, ttlMs: true, pollIntervalMs: true }).strict(),
);
export type ToolTaskCreateCommand = z.infer<typeof ToolTaskCreateCommandSchema>;

export const ToolTaskCancelCommandSchema = command("tool-task.cancel", z.object({ taskId: IdSchema }).strict());
export type ToolTaskCancelCommand = z.infer<typeof ToolTaskCancelCommandSchema>;
