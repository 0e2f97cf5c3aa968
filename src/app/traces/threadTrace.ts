import type { TreeTrace } from "../../traces/spanModel.js";
import { TOOL_ITEM_TYPES } from "../../traces/toolSpans.js";
import { treeTrace } from "../../traces/treeSpans.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";

/**
 * trace.read (docs/telemetry.md): the span model of the tree holding a
 * thread, every span of its root's tree, read at a settled point of the log.
 * Spans still open are included with `endTimeMs: null`. Owner only: a trace
 * spans every thread of the tree.
 */
export async function readThreadTrace(ctx: AppContext, caller: Caller, input: { readonly threadId: string }): Promise<TreeTrace> {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner may read a tree's trace");
  const { orchestrator } = ctx;
  return orchestrator.readCommitted((state) => {
    if (!state.threads.has(input.threadId)) fail("thread_not_found", `thread ${input.threadId} does not exist`);
    return treeTrace({ state, toolItems: (threadId) => orchestrator.timeline.items(threadId, { types: TOOL_ITEM_TYPES }) }, input.threadId);
  });
}
