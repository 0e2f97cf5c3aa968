import type { launchThread } from "../mcp/threads/creation.js";
import type { listThreads, readThread } from "../mcp/threads/reads.js";
import type { ItemView, RunSummary, ThreadSummary } from "../mcp/threads/views.js";
import type { waitForThread } from "../mcp/threads/waits.js";
import type { sendToThread } from "../mcp/threads/writes.js";

/**
 * The structuredContent of the thread tools as the CLI reads it. Type-only:
 * the CLI gets these over MCP, and the compiler points here when a tool's
 * result changes shape.
 */
export type ThreadListResult = ReturnType<typeof listThreads>;
export type ThreadReadResult = ReturnType<typeof readThread>;
export type ThreadLaunchResult = Awaited<ReturnType<typeof launchThread>>;
export type ThreadSendResult = Awaited<ReturnType<typeof sendToThread>>;
export type ThreadWaitResult = Awaited<ReturnType<typeof waitForThread>>;
export type { ItemView, RunSummary, ThreadSummary };
