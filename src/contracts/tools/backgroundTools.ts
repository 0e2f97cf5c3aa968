import { z } from "zod";
import { DelegatedTaskStatusSchema } from "../entities/delegatedTasks.js";
import { PendingBackgroundTaskSchema } from "../thread.js";

/** t3_background_wait (spec 004 §3.5): wait until a thread's background work settles. */
export const BackgroundWaitInput = z
  .object({
    threadId: z.string().min(1).max(512).optional().describe("Default: the calling thread"),
    timeoutMs: z.number().int().min(0).max(3_600_000).optional().describe("Capped by the server's wait limit"),
  })
  .strict();
export type BackgroundWaitInput = z.infer<typeof BackgroundWaitInput>;

export const BackgroundTaskViewSchema = z.object({
  taskId: z.string(),
  childThreadId: z.string(),
  title: z.string(),
  status: DelegatedTaskStatusSchema,
  workState: z.enum(["working", "waiting_for_children", "result_available"]),
  hasPendingQuestion: z.boolean(),
  summary: z.string().nullable(),
});

export const BackgroundWaitOutput = z.object({
  threadId: z.string(),
  /** Nothing is left: every delegated task has its result and no awaited background task is pending. */
  settled: z.boolean(),
  waitTimedOut: z.boolean(),
  /** A task's child is blocked on a question: answer it (t3_pending_request_*) or it will not settle. */
  hasPendingQuestion: z.boolean(),
  /** The delegated tasks that were unfinished when the wait began, as they are now. */
  tasks: z.array(BackgroundTaskViewSchema),
  /** The thread's pending background tasks that hold it (spec 000: a command or monitor only when awaited). */
  backgroundTasks: z.array(PendingBackgroundTaskSchema),
});
export type BackgroundWaitOutput = z.infer<typeof BackgroundWaitOutput>;
