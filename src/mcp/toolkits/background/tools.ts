import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** t3_background_wait (spec 004 §3.5). */
export function backgroundToolkit(app: App): McpToolkit {
  return defineToolkit("background", [
    contractTool("t3_background_wait", {
      description:
        "Wait until a thread's background work settles (default: yours): its delegated tasks have results and no awaited background task is pending. Returns early when a child is blocked on a question. Capped by the server's wait limit; a timeout returns waitTimedOut: true and cancels nothing.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.waitForBackgroundWork(callerOfScope(tool.scope), input, tool),
    }),
  ]);
}
