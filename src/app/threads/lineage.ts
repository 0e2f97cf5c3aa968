import type { ContextHandoff, ContextTransfer } from "../../contracts/entities/contextTransfers.js";
import type { Run } from "../../contracts/entities/runs.js";
import { type InteractionMode, RUNTIME_MODES, type RuntimeMode, interactionModeRank, runtimeModeRank } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import type {
  ThreadForkInput,
  ThreadForkOutput,
  ThreadMergeBackInput,
  ThreadMergeBackOutput,
  ThreadTransfersInput,
  ThreadTransfersOutput,
  TransferView,
} from "../../contracts/tools/lineageTools.js";
import { joinId } from "../../core/ids.js";
import { estimateTokens, utf8Length } from "../../core/lineage/transcript.js";
import { threadProvider } from "../../core/run/lifecycle.js";
import type { ProviderAvailability } from "../../providers/registry.js";
import { type ActingCaller, type Caller, ceilingOf, resolveCaller } from "../caller.js";
import { type AppContext, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { availableProvider, resolveTarget } from "../policy.js";
import { enqueueWhenIdle } from "../workspaces/mergeQueue.js";
import { touched } from "../touched.js";
import { authorizeChange, liveThreadOrFail } from "./authorize.js";
import { actorOf, sentMessage } from "./sent.js";
import { threadLink } from "./views.js";

/**
 * t3_thread_fork, t3_thread_merge_back and t3_thread_transfers (spec 004
 * §3.5) over thread.fork and thread.merge_back (src/core/lineage/).
 */

/** Longest transfer text t3_thread_transfers shows with includeText. */
export const TRANSFER_TEXT_LIMIT = 30_000;

function transferView(transfer: ContextTransfer, threadId: string, includeText: boolean): TransferView {
  const truncated = transfer.text.length > TRANSFER_TEXT_LIMIT;
  return {
    transferId: transfer.id,
    kind: transfer.kind,
    direction: transfer.threadId === threadId ? "incoming" : "outgoing",
    threadId: transfer.threadId,
    sourceThreadId: transfer.sourceThreadId,
    status: transfer.status,
    strategy: null,
    coveredRunOrdinals: transfer.coveredRunOrdinals ?? null,
    bytes: utf8Length(transfer.text),
    estimatedTokens: estimateTokens(transfer.text),
    runId: transfer.runId,
    deliveredRunId: transfer.deliveredRunId ?? null,
    createdAt: transfer.createdAt,
    consumedAt: transfer.consumedAt,
    ...(includeText ? { text: truncated ? transfer.text.slice(0, TRANSFER_TEXT_LIMIT) : transfer.text, truncated } : {}),
  };
}

/** A provider switch's handoff as a transfer into its own thread (kind `handoff`). */
function handoffTransferView(handoff: ContextHandoff, includeText: boolean): TransferView {
  const text = handoff.summaryText ?? "";
  const truncated = text.length > TRANSFER_TEXT_LIMIT;
  return {
    transferId: handoff.id,
    kind: "handoff",
    direction: "incoming",
    threadId: handoff.threadId,
    sourceThreadId: handoff.threadId,
    status: handoff.status,
    strategy: handoff.strategy,
    coveredRunOrdinals: handoff.coveredRunOrdinals,
    bytes: utf8Length(text),
    estimatedTokens: estimateTokens(text),
    runId: null,
    deliveredRunId: handoff.delivery?.runId ?? null,
    createdAt: handoff.createdAt,
    consumedAt: handoff.delivery?.deliveredAt ?? null,
    ...(includeText ? { text: truncated ? text.slice(0, TRANSFER_TEXT_LIMIT) : text, truncated } : {}),
  };
}

/** t3_thread_transfers: the context a thread received and sent (spawn, result, handoff, fork, merge back), newest first. */
export function listTransfers(ctx: AppContext, input: ThreadTransfersInput): ThreadTransfersOutput {
  const state = ctx.orchestrator.state;
  const thread = liveThreadOrFail(ctx, input.threadId);
  const includeText = input.includeText === true;
  const views: TransferView[] = [];
  for (const id of state.threadTransfers.get(thread.id) ?? []) views.push(transferView(state.transfers.get(id)!, thread.id, includeText));
  for (const id of state.threadHandoffs.get(thread.id) ?? []) views.push(handoffTransferView(state.handoffs.get(id)!, includeText));
  const direction = input.direction ?? "all";
  const matching = views.filter((view) => direction === "all" || view.direction === direction);
  // Newest first; the index keeps creation order, so equal times keep the later record first.
  const ordered = matching.map((view, index) => ({ view, index })).sort((a, b) => (a.view.createdAt === b.view.createdAt ? b.index - a.index : a.view.createdAt < b.view.createdAt ? 1 : -1));
  return { threadId: thread.id, total: matching.length, transfers: ordered.slice(0, input.limit ?? 50).map((entry) => entry.view) };
}

/** Where the fork runs: an explicit instance or driver as for new work, else the source's provider and model. */
async function forkTarget(ctx: AppContext, acting: ActingCaller, source: AppThread, input: ThreadForkInput): Promise<{ availability: ProviderAvailability; model: string | null }> {
  const target = input.target;
  const sourceProvider = threadProvider(source);
  if (target?.providerInstanceId !== undefined || target?.driverKind !== undefined || sourceProvider === null) {
    const resolved = await resolveTarget(ctx.registry, acting, target);
    return { availability: resolved.availability, model: resolved.model };
  }
  const availability = await availableProvider(ctx.registry, sourceProvider);
  if (target?.model !== undefined && availability.models.length > 0 && !availability.models.includes(target.model)) {
    fail("model_unavailable", `${sourceProvider} does not advertise model ${target.model}; it offers ${availability.models.join(", ")}`);
  }
  return { availability, model: target?.model ?? source.modelSelection?.model ?? availability.models[0] ?? null };
}

/**
 * The fork's modes: explicit ones must be offered by the provider (that they
 * are no broader than the caller's is the decider's to say); inherited ones
 * are the source's, narrowed to the caller's modes and to what the provider
 * offers.
 */
function forkModes(acting: ActingCaller, source: AppThread, availability: ProviderAvailability, input: ThreadForkInput): { runtimeMode: RuntimeMode; interactionMode: InteractionMode } {
  const offered = availability.capabilities?.runtimeModes ?? RUNTIME_MODES;
  const callerThread = acting.thread;
  let runtimeMode: RuntimeMode;
  if (input.runtimeMode !== undefined && input.runtimeMode !== "inherit") {
    runtimeMode = input.runtimeMode;
    if (!offered.includes(runtimeMode)) fail("invalid_request", `${availability.instance.id} does not offer runtime mode ${runtimeMode}; it offers ${offered.join(", ")}`);
  } else {
    const cap = callerThread === null || runtimeModeRank(source.runtimeMode) <= runtimeModeRank(callerThread.runtimeMode) ? source.runtimeMode : callerThread.runtimeMode;
    runtimeMode = offered.filter((mode) => runtimeModeRank(mode) <= runtimeModeRank(cap)).sort((a, b) => runtimeModeRank(b) - runtimeModeRank(a))[0] ?? "approval-required";
  }
  let interactionMode: InteractionMode;
  if (input.interactionMode !== undefined && input.interactionMode !== "inherit") interactionMode = input.interactionMode;
  else interactionMode = callerThread === null || interactionModeRank(source.interactionMode) <= interactionModeRank(callerThread.interactionMode) ? source.interactionMode : callerThread.interactionMode;
  return { runtimeMode, interactionMode };
}

/**
 * t3_thread_fork: a new thread with lineage fork from the source at a run
 * ordinal (default: its newest run). The fork writes a `fork` item into the
 * source, so forking another thread needs the caller's live run; its
 * commands carry the caller's ceiling, which the fork's modes may not
 * exceed. Context moves as a portable transfer (a bounded transcript) that
 * the fork's first run receives: no driver offers a native fork entry point
 * yet. With `message` the first run starts at once.
 */
export async function forkThread(ctx: AppContext, caller: Caller, input: ThreadForkInput): Promise<ThreadForkOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_fork");
  const source = liveThreadOrFail(ctx, input.threadId);
  const { availability, model } = await forkTarget(ctx, acting, source, input);
  const modes = forkModes(acting, source, availability, input);
  const ids = requestIds(acting, `t3_thread_fork:${source.id}`, input.clientRequestId);
  const threadId = ids.thread(0);
  const actor = actorOf(acting.kind);
  await execute(ctx, {
    type: "thread.fork",
    commandId: ids.command("fork"),
    data: {
      sourceThreadId: source.id,
      threadId,
      ...(input.sourceRunOrdinal === undefined ? {} : { sourceRunOrdinal: input.sourceRunOrdinal }),
      ...(input.title === undefined ? {} : { title: input.title }),
      providerInstanceId: availability.instance.id,
      model,
      ...modes,
      ...actor,
      ceiling: ceilingOf(acting),
    },
  });
  let run: Run | null = null;
  if (input.message !== undefined) {
    const messageId = ids.message();
    const executed = await execute(ctx, {
      type: "message.dispatch",
      commandId: ids.command("send"),
      data: { threadId, text: input.message, messageId, runId: ids.run(), ...actor, ceiling: ceilingOf(acting) },
    });
    run = sentMessage(ctx, executed, threadId, messageId).run;
  }
  const state = ctx.orchestrator.state;
  const fork = state.threads.get(threadId)!;
  const transfer = (state.threadTransfers.get(threadId) ?? []).map((id) => state.transfers.get(id)!).find((t) => t.kind === "fork" && t.threadId === threadId);
  const marker = ctx.orchestrator.timeline.items(threadId, { types: ["fork"], limit: 1 })[0];
  return {
    threadId,
    link: threadLink(ctx.environmentId, threadId),
    title: fork.title,
    sourceThreadId: source.id,
    sourceRunOrdinal: marker?.type === "fork" ? marker.sourceRunOrdinal : null,
    providerInstanceId: availability.instance.id,
    model: fork.modelSelection?.model ?? null,
    runtimeMode: fork.runtimeMode,
    interactionMode: fork.interactionMode,
    contextMode: "portable",
    contextTransferId: transfer?.id ?? null,
    coveredRunOrdinals: transfer?.coveredRunOrdinals ?? null,
    transferBytes: transfer === undefined ? 0 : utf8Length(transfer.text),
    runId: run?.id ?? null,
    status: run?.status ?? "idle",
  };
}

/**
 * t3_thread_merge_back: a fork's or delegated child's outcome into its source
 * thread, which the source's next run receives. The change lands in the
 * source, so the caller must be allowed to change the source: a live run,
 * and a source no broader than the caller (the decider's check).
 */
export async function mergeBack(ctx: AppContext, caller: Caller, input: ThreadMergeBackInput): Promise<ThreadMergeBackOutput> {
  const state = ctx.orchestrator.state;
  const self = resolveCaller(state, caller, "t3_thread_merge_back");
  const threadId = input.threadId ?? self.thread?.id ?? fail("invalid_request", "threadId is required for a caller outside a thread");
  const thread = liveThreadOrFail(ctx, threadId);
  const sourceId = thread.lineage.parentThreadId ?? fail("invalid_request", `no_merge_source: thread ${thread.id} is not a fork or a delegated child: it has no source thread to merge back into`);
  const { acting, target: source } = authorizeChange(ctx, caller, sourceId, "t3_thread_merge_back");
  const ids = requestIds(acting, `t3_thread_merge_back:${thread.id}`, input.clientRequestId);
  const transferId = input.clientRequestId === undefined ? undefined : joinId("context-transfer", "client-request", acting.requestScope, "merge-back", thread.id, input.clientRequestId);
  const executed = await execute(ctx, {
    type: "thread.merge_back",
    commandId: ids.command(),
    data: {
      threadId: thread.id,
      ...(input.summary === undefined ? {} : { summary: input.summary }),
      ...(transferId === undefined ? {} : { transferId }),
      ceiling: ceilingOf(acting),
    },
  });
  const created = [...touched(executed.events).transfers.values()].find((t) => t.kind === "merge_back") ?? (transferId === undefined ? undefined : ctx.orchestrator.state.transfers.get(transferId));
  const transfer = created === undefined ? fail("orchestration_error", `the merge back of thread ${thread.id} recorded no transfer`) : (ctx.orchestrator.state.transfers.get(created.id) ?? created);
  // A worktree child's branch goes to its parent's merge queue too (docs/workspaces.md, "The merge queue").
  const mergeQueueEntry = await enqueueWhenIdle(ctx, thread);
  return {
    threadId: thread.id,
    sourceThreadId: source.id,
    commandId: executed.receipt.commandId,
    sequence: executed.receipt.sequence,
    transfer: transferView(transfer, thread.id, false),
    mergeQueueEntry,
  };
}
