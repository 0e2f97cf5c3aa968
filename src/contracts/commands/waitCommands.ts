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

/**
 * Task holds (docs/delegation.md, "Waits and notices"): a wait that will hand
 * its caller some tasks' results records that it holds them before it looks
 * at them, and its end is recorded with what it took. While a hold stands
 * core refuses the completion notice and the blocking-question notice of
 * that task, so exactly one delivery happens whichever node's reactor acts.
 * `holder` is the server node serving the wait; `runId` the caller's run
 * (null for a caller without one), whose end releases the hold too.
 */
export const TaskWaitHoldCommandSchema = command(
  "delegated-task.wait-hold",
  z.object({ waitId: IdSchema, taskIds: z.array(IdSchema).min(1), runId: IdSchema.nullable(), holder: IdSchema }).strict(),
);
export type TaskWaitHoldCommand = z.infer<typeof TaskWaitHoldCommandSchema>;

/**
 * The wait ended: `took` are the tasks whose result it handed over (a pending
 * delivery becomes acknowledged in the same decision); `owed` those whose
 * pending question it could not hand over because the call was cut short,
 * owed to the run that waited.
 */
export const TaskWaitReleaseCommandSchema = command(
  "delegated-task.wait-release",
  z.object({ waitId: IdSchema, taskIds: z.array(IdSchema).min(1), took: z.array(IdSchema), owed: z.array(IdSchema) }).strict(),
);
export type TaskWaitReleaseCommand = z.infer<typeof TaskWaitReleaseCommandSchema>;

/** The node serving some waits is gone (a restart, or a lost PostgreSQL node): its holds end. null: every holder (a single node's restart). */
export const TaskWaitsLostCommandSchema = command("delegated-task.waits-lost", z.object({ holder: IdSchema.nullable() }).strict());
export type TaskWaitsLostCommand = z.infer<typeof TaskWaitsLostCommandSchema>;
