import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** A parent workspace's merge queue (docs/workspaces.md, "The merge queue"). */
export function mergeQueueToolkit(app: App): McpToolkit {
  return defineToolkit("mergeQueue", [
    contractTool("t3_merge_queue", {
      description:
        "A parent thread's merge queue: its worktree children's branches, merged one at a time after the project's check, each with its status and log. cancel (owner only) drops a queued entry.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.mergeQueue(callerOfScope(tool.scope), input),
    }),
  ]);
}
