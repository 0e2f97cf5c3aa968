import type { Run } from "../contracts/entities/runs.js";
import type { TurnItem } from "../contracts/turnItems.js";
import { escapeXml } from "../core/lineage/transcript.js";
import { toolCallOf } from "../core/run/crashResume.js";
import type { Timeline } from "./timeline.js";

/** Finished tool calls of the lost attempt named in the brief, newest last. */
const MAX_FINISHED = 20;

/**
 * What a run started again after a crash tells its agent (docs/runs.md,
 * "Work after a crash"), in the turn's `<loom_context>`: that the same turn
 * is being resumed, which tool calls were cut off and may be half done (so
 * the agent checks before it repeats one), and what the lost attempt had
 * finished, for an agent whose own conversation could not be restored. Null
 * for a run never resumed.
 */
export function resumeBrief(timeline: Timeline, run: Run): string | null {
  const resume = run.resumes?.[run.resumes.length - 1];
  if (resume === undefined) return null;
  const why = resume.reason === "node_lost" ? "the Loom node running it was lost" : "Loom restarted";
  const lines = [
    `<crash_resume reason="${escapeXml(resume.reason)}" attempt="${resume.lostAttemptOrdinal + 1}">`,
    `Your previous attempt at this same message was cut off because ${why}, and its agent process with it. Continue the task from where it stopped rather than starting over. If your own conversation was restored, it shows how far you got; otherwise what the attempt did is listed here.`,
  ];
  lines.push("A tool call you had started when the process was lost (a command, a file edit) may be half done: check its effects (files, processes, commits) before repeating it.");
  if (resume.unfinished.length > 0) {
    lines.push("These were recorded as still running:");
    for (const call of resume.unfinished) lines.push(`- ${escapeXml(call)}`);
  }
  const finished = timeline
    .items(run.threadId)
    .filter((item) => item.runId === run.id && item.createdAt <= resume.at)
    .map(finishedCall)
    .filter((call): call is string => call !== null);
  if (finished.length > 0) {
    lines.push("Finished before the cut-off:");
    for (const call of finished.slice(-MAX_FINISHED)) lines.push(`- ${escapeXml(call)}`);
  }
  lines.push("</crash_resume>");
  return lines.join("\n");
}

/** A tool call the lost attempt finished, as the brief names it (with a command's exit code). */
function finishedCall(item: TurnItem): string | null {
  if (!("status" in item) || item.status !== "completed") return null;
  const call = toolCallOf(item);
  return call !== null && item.type === "command_execution" ? `${call} (exit ${item.exitCode ?? "unknown"})` : call;
}
