import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * Recorded waits: the app layer records a blocking wait of an agent (a
 * t3_thread_wait or a delegate_task wait) as a `tool_call` execution node in
 * status `waiting` on the caller's active run, and closes it when the wait
 * returns. Thread summaries derive `blockedOnThreadWait` from these durable
 * nodes. Like the runtime ingestion commands these are Loom's own and
 * engine-only: they are not in the spec's command sets and the HTTP API
 * refuses their names.
 */

/** `label` names the tool (t3_thread_wait, delegate_task); `waitingOn` what it waits for (a thread or task id). */
export const WaitStartedCommandSchema = command(
  "thread-wait.started",
  z.object({ threadId: IdSchema, runId: IdSchema, nodeId: IdSchema, label: z.string().min(1), waitingOn: IdSchema }).strict(),
);
export type WaitStartedCommand = z.infer<typeof WaitStartedCommandSchema>;

export const WaitEndedCommandSchema = command("thread-wait.ended", z.object({ threadId: IdSchema, nodeId: IdSchema }).strict());
export type WaitEndedCommand = z.infer<typeof WaitEndedCommandSchema>;
