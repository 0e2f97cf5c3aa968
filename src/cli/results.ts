import type { ToolOutput } from "../contracts/tools/toolContracts.js";

/**
 * The structuredContent of the thread tools as the CLI reads it, from the
 * tool contracts: the compiler points here when a tool's result changes shape.
 */
export type ThreadListResult = ToolOutput<"t3_thread_list">;
export type ThreadReadResult = ToolOutput<"t3_thread_read">;
export type ThreadLaunchResult = ToolOutput<"t3_thread_launch">;
export type ThreadSendResult = ToolOutput<"t3_thread_send">;
export type ThreadWaitResult = ToolOutput<"t3_thread_wait">;
export type { ItemView, RunSummary, ThreadSummary } from "../contracts/tools/toolOutputs.js";
