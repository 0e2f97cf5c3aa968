import { McpCapability } from "../../credentialRegistry.js";
import { defineTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { ThreadToolsContext } from "../../threads/context.js";
import { capabilities, createThreads, launchThread } from "../../threads/creation.js";
import { listThreads, readThread } from "../../threads/reads.js";
import { waitForThread } from "../../threads/waits.js";
import { interruptThread, linkPullRequest, sendToThread, unlinkPullRequest, updateThread } from "../../threads/writes.js";
import {
  CapabilitiesInput,
  CreateThreadsInput,
  LinkPullRequestInput,
  ThreadInterruptInput,
  ThreadLaunchInput,
  ThreadListInput,
  ThreadReadInput,
  ThreadSendInput,
  ThreadUpdateInput,
  ThreadWaitInput,
  UnlinkPullRequestInput,
} from "./schemas.js";

const orchestration = McpCapability.orchestration;

/** The orchestrator's thread tools (spec 000, Tool Surface), bound to one engine. */
export function threadToolkit(ctx: ThreadToolsContext): McpToolkit {
  return defineToolkit("orchestrator", [
    defineTool({
      name: "orchestrator_capabilities",
      description: "What you inherit (provider, model, modes), which provider instances can run work and their models, and feature flags.",
      inputSchema: CapabilitiesInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (_input, tool) => capabilities(ctx, tool.scope),
    }),
    defineTool({
      name: "create_threads",
      description: "Create 1 to 20 ordinary top-level threads in your project. Entries with a prompt start a run at once; the others stay idle.",
      inputSchema: CreateThreadsInput,
      capability: orchestration,
      handler: (input, tool) => createThreads(ctx, tool.scope, input),
    }),
    defineTool({
      name: "t3_thread_launch",
      description: "Launch one top-level thread bound to a workspace (root, scratch or existing_worktree) and start it with `message`.",
      inputSchema: ThreadLaunchInput,
      capability: orchestration,
      handler: (input, tool) => launchThread(ctx, tool.scope, input),
    }),
    defineTool({
      name: "t3_thread_list",
      description: "List thread shells in one project (yours unless projectId is given), newest first, bounded and offset-paginated.",
      inputSchema: ThreadListInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => Promise.resolve(listThreads(ctx, tool.scope, input)),
    }),
    defineTool({
      name: "t3_thread_read",
      description:
        "Read a thread's state, recent runs and timeline. Without a cursor you get the newest items; pass beforePosition=earlierPosition for older ones, afterPosition=nextPosition for newer ones, afterPosition=-1 to start at the oldest.",
      inputSchema: ThreadReadInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => Promise.resolve(readThread(ctx, tool.scope, input)),
    }),
    defineTool({
      name: "t3_thread_update",
      description: "Rename a thread (action rename, with title) or regenerate its title from its first message (action regenerate_title).",
      inputSchema: ThreadUpdateInput,
      capability: orchestration,
      handler: (input, tool) => updateThread(ctx, tool.scope, input),
    }),
    defineTool({
      name: "link_pull_request",
      description: "Link a pull request to a thread.",
      inputSchema: LinkPullRequestInput,
      capability: orchestration,
      handler: (input, tool) => linkPullRequest(ctx, tool.scope, input),
    }),
    defineTool({
      name: "unlink_pull_request",
      description: "Unlink a thread's pull request.",
      inputSchema: UnlinkPullRequestInput,
      capability: orchestration,
      handler: (input, tool) => unlinkPullRequest(ctx, tool.scope, input),
    }),
    defineTool({
      name: "t3_thread_send",
      description: "Send a message to any thread: starts an idle thread, steers a steerable running turn, or queues. See `mode`.",
      inputSchema: ThreadSendInput,
      capability: orchestration,
      handler: (input, tool) => sendToThread(ctx, tool.scope, input),
    }),
    defineTool({
      name: "t3_thread_wait",
      description: "Wait for a run (default: the latest) to end, up to the server's wait cap. A timeout returns waitTimedOut: true and cancels nothing.",
      inputSchema: ThreadWaitInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => waitForThread(ctx, input, tool),
    }),
    defineTool({
      name: "t3_thread_interrupt",
      description: "Interrupt a thread's run (default: the newest interruptible one).",
      inputSchema: ThreadInterruptInput,
      capability: orchestration,
      handler: (input, tool) => interruptThread(ctx, tool.scope, input),
    }),
  ]);
}
