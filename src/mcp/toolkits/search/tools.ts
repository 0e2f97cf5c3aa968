import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** t3_thread_search (spec 004 §3.5), bound to one engine. */
export function searchToolkit(app: App): McpToolkit {
  return defineToolkit("search", [
    contractTool("t3_thread_search", {
      description:
        'Full-text search over threads\' messages, tool calls, commands and file changes: across your project (or projectId), or within one thread (threadId). Words must all match; "quotes" for a phrase; word* for a prefix. Hits carry thread, run, item position and a snippet; page with offset=nextOffset.',
      capability: McpCapability.orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => app.threadSearch(callerOfScope(tool.scope), input),
    }),
  ]);
}
