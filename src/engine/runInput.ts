import type { Run } from "../contracts/entities/runs.js";
import type { OrchestrationState } from "../core/state.js";
import { resumeBrief } from "./resumeBrief.js";
import type { Timeline } from "./timeline.js";

/**
 * What a run's turn receives as input: the context attached to the run when
 * it started (a provider switch's handoff, a fork or merge-back transfer;
 * see src/core/lineage/context.ts), then the run's own message. Context comes
 * first (`before`: a recap of the agent's earlier sessions, src/engine/resumeRecap.ts,
 * precedes the rest, then a crash resume's brief), in one `<loom_context>` element, so an agent reads where the thread
 * stands before the new message; the transcripts inside escape `<`, `>` and
 * `&`, so the element's end is unambiguous.
 */
export function runInput(state: OrchestrationState, timeline: Timeline, run: Run, before: readonly string[] = []): string {
  // A run without a message (a notice's follow-up run) takes its notification item's text.
  const message = timeline.runInput(run.threadId, run.id, run.messageId);
  // A run started again after a crash says so first (src/engine/resumeBrief.ts).
  const resumed = resumeBrief(timeline, run);
  const blocks = [...before, ...(resumed === null ? [] : [resumed]), ...contextBlocks(state, run)];
  return blocks.length === 0 ? message : `${LOOM_CONTEXT_OPEN}\n${blocks.join("\n")}\n${LOOM_CONTEXT_CLOSE}\n\n${message}`;
}

export const LOOM_CONTEXT_OPEN = "<loom_context>";
export const LOOM_CONTEXT_CLOSE = "</loom_context>";

/** The context texts attached to `run`, oldest first. */
export function contextBlocks(state: OrchestrationState, run: Run): string[] {
  const blocks: { at: string; text: string }[] = [];
  for (const id of state.threadHandoffs.get(run.threadId) ?? []) {
    const handoff = state.handoffs.get(id);
    if (handoff?.delivery?.runId === run.id && handoff.summaryText !== null) blocks.push({ at: handoff.createdAt, text: handoff.summaryText });
  }
  for (const id of state.threadTransfers.get(run.threadId) ?? []) {
    const transfer = state.transfers.get(id);
    if (transfer?.threadId === run.threadId && transfer.deliveredRunId === run.id) blocks.push({ at: transfer.createdAt, text: transfer.text });
  }
  return blocks.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)).map((block) => block.text);
}
