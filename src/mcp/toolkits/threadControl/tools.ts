import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

const orchestration = McpCapability.orchestration;

/**
 * The thread toolkit's queue, organization, configuration and lineage tools
 * (spec 004 §3.5, ThreadToolkit), bound to one engine. Every tool is one app
 * function (src/app/threads/); this file only binds contracts to them.
 */
export function threadControlToolkit(app: App): McpToolkit {
  return defineToolkit("thread-control", [
    contractTool("t3_queue_list", {
      description: "List the runs waiting in a thread's queue, next first, with a preview of each message and whether the running turn can take a promoted one.",
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input) => Promise.resolve(app.listQueue(input)),
    }),
    contractTool("t3_queue_read", {
      description: "Read one queued run with its whole message (up to 30,000 characters).",
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input) => Promise.resolve(app.readQueuedRun(input)),
    }),
    contractTool("t3_queue_edit", {
      description: "Replace the message of a queued run before it starts.",
      capability: orchestration,
      handler: (input, tool) => app.editQueuedRun(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_queue_cancel", {
      description: "Cancel a queued run: it never starts; its message stays in the timeline.",
      capability: orchestration,
      handler: (input, tool) => app.cancelQueuedRun(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_queue_reorder", {
      description: "Put a thread's queued runs in a new order: pass every queued run id once, first runs next.",
      capability: orchestration,
      handler: (input, tool) => app.reorderQueue(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_queue_promote_to_steer", {
      description: "Move a queued message into the running turn as steering input (the provider must be able to steer a running turn).",
      capability: orchestration,
      handler: (input, tool) => app.promoteQueuedRun(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_organize", {
      description:
        "Organize a thread: pin, unpin, reorder_pins (threadIds), archive, unarchive and delete (each with every thread under it; delete ends preparing runs, releases agents and removes worktrees), settle, unsettle, snooze (until; wakes early on a pending request or a failure), unsnooze, mark_unread, auto_settle (enabled).",
      capability: orchestration,
      handler: (input, tool) => app.organizeThread(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_configuration", {
      description: "A thread's runtime mode, interaction mode, model and provider instance, what that provider offers, and its newest context handoff.",
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => app.threadConfiguration(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_configure", {
      description:
        "Change a thread's runtime mode, interaction mode, model or provider instance (never broader than your own modes). A new provider instance takes the thread's next run, with a handoff of the runs it has not seen.",
      capability: orchestration,
      handler: (input, tool) => app.configureThread(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_fork", {
      description:
        "Fork a thread at a run: a new thread (lineage fork) whose first run receives the source's transcript through that run. With `message` it starts at once; target picks another provider.",
      capability: orchestration,
      handler: (input, tool) => app.forkThread(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_merge_back", {
      description:
        "Send a fork's or delegated child's outcome (its finished runs since the last merge back, or your `summary`) back to the thread it came from; that thread's next run receives it.",
      capability: orchestration,
      handler: (input, tool) => app.mergeBack(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_transfers", {
      description: "List a thread's context transfers, newest first: delegation spawns and results, provider-switch handoffs, forks and merge backs, with status, covered runs and size.",
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input) => Promise.resolve(app.listTransfers(input)),
    }),
  ]);
}
