import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { AppContext } from "../../../app/context.js";
import { threadSearch } from "../../../app/search/threadSearch.js";

/** t3_thread_search (spec 004 §3.5), bound to one engine. */
export function searchToolkit(ctx: AppContext): McpToolkit {
  return defineToolkit("search", [
    contractTool("t3_thread_search", {
      description:
        'Full-text search over threads\' messages, tool calls, commands and file changes: across your project (or projectId), or within one thread (threadId). Words must all match; "quotes" for a phrase; word* for a prefix. Hits carry thread, run, item position and a snippet; page with offset=nextOffset.',
      capability: McpCapability.orchestration,
      annotations: { readOnlyHint: true },
      handler: (input, tool) => threadSearch(ctx, callerOfScope(tool.scope), input),
    }),
  ]);
}
