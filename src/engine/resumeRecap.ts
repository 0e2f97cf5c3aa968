import type { Run } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import { lastSeenOrdinal, readMoreOf } from "../core/lineage/context.js";
import { buildTranscript, transcriptRuns } from "../core/lineage/transcript.js";
import type { OrchestrationState } from "../core/state.js";
import { runsOf } from "./queries.js";
import type { Timeline } from "./timeline.js";

/**
 * The context handoff for an agent that could not continue its own
 * conversation: a new session on a thread whose earlier sessions on the same
 * provider instance ended (a restart, a released session) and whose driver
 * has no native resume, or whose resume failed. It is a bounded transcript
 * (the handoff budget, newest runs first) of the runs that instance had
 * seen, placed in the first turn's `<loom_context>`. Null when there is
 * nothing to recall.
 */
export function resumeRecap(state: OrchestrationState, timeline: Timeline, thread: AppThread, run: Run, providerInstanceId: string): string | null {
  const runs = runsOf(state, thread.id);
  const seen = lastSeenOrdinal(
    runs.filter((r) => r.id !== run.id),
    providerInstanceId,
  );
  const recalled = runs.filter((r) => r.id !== run.id && r.ordinal <= seen && r.startedAt !== null);
  if (recalled.length === 0) return null;
  const first = recalled[0]!.ordinal;
  const last = recalled[recalled.length - 1]!.ordinal;
  return buildTranscript({
    tag: "resume",
    attributes: [
      ["thread", thread.id],
      ["provider", providerInstanceId],
      ["runs", first === last ? `${first}` : `${first}-${last}`],
    ],
    instructions: `You worked on thread "${thread.title}" before, in a session that has ended; your own record of that conversation could not be restored. Below is its transcript. Continue the thread from it; the new message follows after this context.`,
    runs: transcriptRuns(timeline.items(thread.id), recalled),
    readMore: readMoreOf(thread.id),
  }).text;
}
