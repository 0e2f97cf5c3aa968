import type {
  ThreadInteractionModeSetCommand,
  ThreadMetadataUpdateCommand,
  ThreadModelSelectionSetCommand,
  ThreadPullRequestLinkCommand,
  ThreadPullRequestUnlinkCommand,
  ThreadRuntimeModeSetCommand,
} from "../../contracts/commands/threadCommands.js";
import { threadEvent } from "../../contracts/events.js";
import { INTERACTION_MODES, RUNTIME_MODES } from "../../contracts/modes.js";
import type { PullRequestLink } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, invalidModeRejection, liveThread, validTitle } from "./guards.js";

/**
 * Rename. A user rename wins over an in-flight title regeneration, so it
 * clears titleRegenerating. With `titleRegenerating: true` it starts a
 * regeneration instead, showing `title` meanwhile (one at a time).
 */
export function decideThreadMetadataUpdate(state: OrchestrationState, command: ThreadMetadataUpdateCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const valid = validTitle(command.data.title);
  if (valid.kind === "rejected") return valid;
  const regenerating = command.data.titleRegenerating === true;
  if (regenerating && thread.titleRegenerating) {
    return reject(RejectionCode.titleRegenerationRunning, `a title regeneration is already running for thread ${thread.id}`);
  }
  if (!regenerating && valid.title === thread.title && !thread.titleRegenerating) {
    return reject(RejectionCode.titleUnchanged, `thread ${thread.id} is already titled "${valid.title}"`);
  }
  return accept([threadEvent("thread.metadata-updated", changed(thread, ctx, { title: valid.title, titleRegenerating: regenerating }))]);
}

/**
 * Link a pull request by url. Links are never removed, only marked unlinked,
 * so re-linking an unlinked url revives its entry in place (linkedAt reset,
 * unlinkedAt cleared, number/title replaced when given).
 */
export function decideThreadPullRequestLink(state: OrchestrationState, command: ThreadPullRequestLinkCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const { url, number, title } = command.data;
  const index = thread.pullRequests.findIndex((link) => link.url === url);
  const existing = thread.pullRequests[index];
  let pullRequests: PullRequestLink[];
  if (existing === undefined) {
    pullRequests = [...thread.pullRequests, { url, number: number ?? null, title: title ?? null, linkedAt: ctx.now, unlinkedAt: null }];
  } else if (existing.unlinkedAt === null) {
    return reject(RejectionCode.pullRequestAlreadyLinked, `pull request ${url} is already linked to thread ${thread.id}`);
  } else {
    const relinked: PullRequestLink = {
      url,
      number: number ?? existing.number,
      title: title ?? existing.title,
      linkedAt: ctx.now,
      unlinkedAt: null,
    };
    pullRequests = thread.pullRequests.map((link, i) => (i === index ? relinked : link));
  }
  return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, { pullRequests }))]);
}

export function decideThreadPullRequestUnlink(state: OrchestrationState, command: ThreadPullRequestUnlinkCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const url = command.data.url;
  const existing = thread.pullRequests.find((link) => link.url === url);
  if (existing === undefined || existing.unlinkedAt !== null) {
    return reject(RejectionCode.pullRequestNotLinked, `pull request ${url} is not linked to thread ${thread.id}`);
  }
  const pullRequests = thread.pullRequests.map((link) => (link === existing ? { ...link, unlinkedAt: ctx.now } : link));
  return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, { pullRequests }))]);
}

/**
 * The privilege ceiling (spec 000: a target's modes may not be broader than
 * the caller's) is enforced where the caller is known, in the MCP layer; the
 * decider only checks the value is a known mode and differs from the current one.
 */
export function decideThreadRuntimeModeSet(state: OrchestrationState, command: ThreadRuntimeModeSetCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const runtimeMode = command.data.runtimeMode;
  const invalid = invalidModeRejection("runtime", runtimeMode, RUNTIME_MODES);
  if (invalid !== null) return invalid;
  if (thread.runtimeMode === runtimeMode) {
    return reject(RejectionCode.runtimeModeUnchanged, `thread ${thread.id} already runs in ${runtimeMode}`);
  }
  return accept([threadEvent("thread.runtime-mode-updated", changed(thread, ctx, { runtimeMode }))]);
}

export function decideThreadInteractionModeSet(
  state: OrchestrationState,
  command: ThreadInteractionModeSetCommand,
  ctx: DecideContext,
): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const interactionMode = command.data.interactionMode;
  const invalid = invalidModeRejection("interaction", interactionMode, INTERACTION_MODES);
  if (invalid !== null) return invalid;
  if (thread.interactionMode === interactionMode) {
    return reject(RejectionCode.interactionModeUnchanged, `thread ${thread.id} is already in ${interactionMode} mode`);
  }
  return accept([threadEvent("thread.interaction-mode-updated", changed(thread, ctx, { interactionMode }))]);
}

/** The selection also sets the thread's providerInstanceId, which follows the selected instance. */
export function decideThreadModelSelectionSet(
  state: OrchestrationState,
  command: ThreadModelSelectionSetCommand,
  ctx: DecideContext,
): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const { providerInstanceId, model } = command.data.modelSelection;
  const current = thread.modelSelection;
  if (current !== null && current.providerInstanceId === providerInstanceId && current.model === model && thread.providerInstanceId === providerInstanceId) {
    return reject(RejectionCode.modelSelectionUnchanged, `thread ${thread.id} already uses ${providerInstanceId}/${model ?? "(default model)"}`);
  }
  return accept([
    threadEvent("thread.model-selection-updated", changed(thread, ctx, { modelSelection: { providerInstanceId, model }, providerInstanceId })),
  ]);
}
