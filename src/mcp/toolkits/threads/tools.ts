import { callerOfCall, callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

const orchestration = McpCapability.orchestration;

/** The orchestrator's thread tools (spec 000, Tool Surface), over the app's operations. */
export function threadToolkit(app: App): McpToolkit {
  return defineToolkit("orchestrator", [
    contractTool("orchestrator_capabilities", {
      description: "What you inherit (provider, model, modes), which provider instances can run work and their models, and feature flags.",
      capability: orchestration,
      handler: (input, tool) => app.capabilities(callerOfScope(tool.scope), input),
    }),
    contractTool("create_threads", {
      description: "Create 1 to 20 ordinary top-level threads in your project. Entries with a prompt start a run at once; the others stay idle.",
      capability: orchestration,
      handler: (input, tool) => app.createThreads(callerOfCall(tool), input),
    }),
    contractTool("t3_thread_launch", {
      description: "Launch one top-level thread bound to a workspace (root, scratch or existing_worktree) and start it with `message`.",
      capability: orchestration,
      handler: (input, tool) => app.launchThread(callerOfCall(tool), input),
    }),
    contractTool("t3_thread_list", {
      description: "List thread shells in one project (yours unless projectId is given), newest first, bounded and offset-paginated.",
      capability: orchestration,
      handler: (input, tool) => Promise.resolve(app.listThreads(callerOfScope(tool.scope), input)),
    }),
    contractTool("t3_thread_read", {
      description:
        "Read a thread's state, recent runs and timeline. Without a cursor you get the newest items; pass beforePosition=earlierPosition for older ones, afterPosition=nextPosition for newer ones, afterPosition=-1 to start at the oldest.",
      capability: orchestration,
      handler: (input, tool) => Promise.resolve(app.readThread(callerOfScope(tool.scope), input)),
    }),
    contractTool("t3_thread_update", {
      description: "Rename a thread (action rename, with title) or regenerate its title from its first message (action regenerate_title).",
      capability: orchestration,
      handler: (input, tool) => app.updateThread(callerOfScope(tool.scope), input),
    }),
    contractTool("link_pull_request", {
      description: "Link a pull request to a thread.",
      capability: orchestration,
      handler: (input, tool) => app.linkPullRequest(callerOfScope(tool.scope), input),
    }),
    contractTool("unlink_pull_request", {
      description: "Unlink a thread's pull request.",
      capability: orchestration,
      handler: (input, tool) => app.unlinkPullRequest(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_thread_send", {
      description: "Send a message to any thread: starts an idle thread, steers a steerable running turn, or queues. See `mode`.",
      capability: orchestration,
      handler: (input, tool) => app.sendToThread(callerOfCall(tool), input),
    }),
    contractTool("t3_thread_wait", {
      description: "Wait for a run (default: the latest) to end, up to the server's wait cap. A timeout returns waitTimedOut: true and cancels nothing.",
      capability: orchestration,
      handler: (input, tool) => app.waitForThread(input, tool, callerOfScope(tool.scope)),
    }),
    contractTool("t3_thread_interrupt", {
      description: "Interrupt a thread's run (default: the newest interruptible one).",
      capability: orchestration,
      handler: (input, tool) => app.interruptThread(callerOfScope(tool.scope), input),
    }),
  ]);
}
