/**
 * Recorded waits: the app layer records a blocking wait of an agent (a
 * t3_thread_wait or a delegate_task wait) as a `tool_call` execution node in
 * status `waiting` on the caller's active run, and closes it when the wait
 * returns. Thread summaries derive `blockedOnThreadWait` from these durable
 * nodes. Like the runtime ingestion commands these are Loom's own and
 * engine-only: they are not in the spec's command sets and the HTTP API
 * refuses their names.
 */
export const WaitCommandType = {
  waitStarted: "thread-wait.started",
  waitEnded: "thread-wait.ended",
} as const;
export type WaitCommandType = (typeof WaitCommandType)[keyof typeof WaitCommandType];

export interface WaitStartedCommand {
  readonly type: "thread-wait.started";
  readonly commandId: string;
  /** `label` names the tool (t3_thread_wait, delegate_task); `waitingOn` what it waits for (a thread or task id). */
  readonly data: { readonly threadId: string; readonly runId: string; readonly nodeId: string; readonly label: string; readonly waitingOn: string };
}

export interface WaitEndedCommand {
  readonly type: "thread-wait.ended";
  readonly commandId: string;
  readonly data: { readonly threadId: string; readonly nodeId: string };
}

export type WaitCommand = WaitStartedCommand | WaitEndedCommand;
