import type { ClientCommand } from "../../contracts/commands.js";
import type { AppThread } from "../../contracts/thread.js";
import { type OrganizeAction, type OrganizationView, type ThreadOrganizeInput, type ThreadOrganizeOutput } from "../../contracts/tools/organizeTools.js";
import { isUnread } from "../../engine/projections.js";
import { currentRunOf } from "../../engine/queries.js";
import type { Ceiling } from "../../contracts/modes.js";
import { type Caller, ceilingOf, resolveCaller } from "../caller.js";
import { type AppContext, type Executed, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { touched } from "../touched.js";
import { isEffectivelySnoozed } from "./attention.js";
import { authorizeChange, liveThreadOrFail } from "./authorize.js";

/**
 * t3_thread_organize (spec 004 §3.5) over the thread organization commands
 * (docs/threads.md): one action per call. Every action changes threads, so
 * its command carries the caller's ceiling: the decider refuses it for a
 * thread broader than the caller.
 * A change that would change nothing is refused by the decider with its own
 * code (thread_already_pinned, ...), which reaches the caller as
 * invalid_request with that code in the message.
 */

type SingleAction = Exclude<OrganizeAction, "reorder_pins">;
type ThreadCommandOf = (threadId: string, input: ThreadOrganizeInput, commandId: string, ceiling: Ceiling) => ClientCommand;

/** Each single-thread action and the command it is; the compiler checks every action has one. */
const COMMAND_OF_ACTION: { readonly [A in SingleAction]: ThreadCommandOf } = {
  pin: (threadId, _input, commandId, ceiling) => ({ type: "thread.pin", commandId, data: { threadId, ceiling } }),
  unpin: (threadId, _input, commandId, ceiling) => ({ type: "thread.unpin", commandId, data: { threadId, ceiling } }),
  archive: (threadId, _input, commandId, ceiling) => ({ type: "thread.archive", commandId, data: { threadId, ceiling } }),
  unarchive: (threadId, _input, commandId, ceiling) => ({ type: "thread.unarchive", commandId, data: { threadId, ceiling } }),
  delete: (threadId, _input, commandId, ceiling) => ({ type: "thread.delete", commandId, data: { threadId, ceiling } }),
  settle: (threadId, _input, commandId, ceiling) => ({ type: "thread.settle", commandId, data: { threadId, ceiling } }),
  unsettle: (threadId, _input, commandId, ceiling) => ({ type: "thread.unsettle", commandId, data: { threadId, ceiling } }),
  snooze: (threadId, input, commandId, ceiling) => ({ type: "thread.snooze", commandId, data: { threadId, until: input.until ?? fail("invalid_request", "snooze needs `until`, the time the thread wakes"), ceiling } }),
  unsnooze: (threadId, _input, commandId, ceiling) => ({ type: "thread.unsnooze", commandId, data: { threadId, ceiling } }),
  mark_unread: (threadId, _input, commandId, ceiling) => ({ type: "thread.mark-unread", commandId, data: { threadId, ceiling } }),
  auto_settle: (threadId, input, commandId, ceiling) => ({
    type: "thread.auto-settle.set",
    commandId,
    data: {
      threadId,
      autoSettle: input.enabled ?? fail("invalid_request", "auto_settle needs `enabled`: true settles the thread when its work finishes, false stops that"),
      ceiling,
    },
  }),
};

/** Fields that belong to one action only; passing them to another is a mistake worth reporting. */
function checkFields(input: ThreadOrganizeInput): void {
  if (input.until !== undefined && input.action !== "snooze") fail("invalid_request", "`until` is only for the snooze action");
  if (input.threadIds !== undefined && input.action !== "reorder_pins") fail("invalid_request", "`threadIds` is only for the reorder_pins action");
  if (input.enabled !== undefined && input.action !== "auto_settle") fail("invalid_request", "`enabled` is only for the auto_settle action");
}

export function organizationView(ctx: AppContext, thread: AppThread): OrganizationView {
  const now = new Date(ctx.clock()).toISOString();
  return {
    threadId: thread.id,
    pinned: thread.pinnedRank !== null,
    pinnedRank: thread.pinnedRank,
    archived: thread.archivedAt !== null,
    deleted: thread.deletedAt !== null,
    settled: thread.settledAt !== null,
    snoozed: isEffectivelySnoozed(ctx.orchestrator.state, thread, now),
    snoozedUntil: thread.snoozedUntil,
    unread: isUnread(thread, currentRunOf(ctx.orchestrator.state, thread.id)),
    autoSettle: thread.autoSettle,
  };
}

function pinnedOrder(ctx: AppContext): string[] {
  return [...ctx.orchestrator.state.threads.values()]
    .filter((thread) => thread.deletedAt === null && thread.pinnedRank !== null)
    .sort((a, b) => a.pinnedRank! - b.pinnedRank!)
    .map((thread) => thread.id);
}

function result(ctx: AppContext, action: OrganizeAction, executed: Executed, threadId: string | null): ThreadOrganizeOutput {
  const thread = threadId === null ? null : (touched(executed.events).threads.get(threadId) ?? ctx.orchestrator.state.threads.get(threadId)!);
  return {
    action,
    commandId: executed.receipt.commandId,
    sequence: executed.receipt.sequence,
    thread: thread === null ? null : organizationView(ctx, thread),
    pinnedOrder: pinnedOrder(ctx),
    affectedThreadIds: [...new Set(executed.events.filter((event) => event.type.startsWith("thread.")).map((event) => event.streamId))],
  };
}

/** t3_thread_organize: pin, unpin, reorder pins, archive, delete, settle, snooze, mark unread or set auto-settle. */
export async function organizeThread(ctx: AppContext, caller: Caller, input: ThreadOrganizeInput): Promise<ThreadOrganizeOutput> {
  checkFields(input);
  if (input.action === "reorder_pins") {
    const threadIds = input.threadIds ?? fail("invalid_request", "reorder_pins needs `threadIds`: every pinned thread once, in the new order");
    // Reordering moves every listed thread: each must exist, and the decider holds each to the caller's ceiling.
    const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_organize");
    for (const threadId of threadIds) liveThreadOrFail(ctx, threadId);
    const ids = requestIds(acting, "t3_thread_organize:reorder_pins", input.clientRequestId);
    const executed = await execute(ctx, { type: "thread.pin.reorder", commandId: ids.command(), data: { threadIds, ceiling: ceilingOf(acting) } });
    return result(ctx, input.action, executed, null);
  }
  if (input.action === "delete" && input.threadId === undefined) fail("invalid_request", "delete needs `threadId`: the thread to delete with every thread under it");
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_organize");
  if (input.action === "delete" && acting.thread !== null && isAtOrAbove(ctx, target.id, acting.thread)) {
    fail("invalid_request", `thread ${acting.thread.id} cannot delete ${target.id === acting.thread.id ? "itself" : `${target.id}, a thread above it`}: deleting a thread deletes every thread under it`);
  }
  const ids = requestIds(acting, `t3_thread_organize:${input.action}:${target.id}`, input.clientRequestId);
  const executed = await execute(ctx, COMMAND_OF_ACTION[input.action](target.id, input, ids.command(), ceilingOf(acting)));
  return result(ctx, input.action, executed, target.id);
}

/** Whether `threadId` is `thread` or one of its ancestors. */
function isAtOrAbove(ctx: AppContext, threadId: string, thread: AppThread): boolean {
  for (let at: AppThread | undefined = thread, depth = 0; at !== undefined && depth < 1_000; depth += 1) {
    if (at.id === threadId) return true;
    at = at.lineage.parentThreadId === null ? undefined : ctx.orchestrator.state.threads.get(at.lineage.parentThreadId);
  }
  return false;
}
