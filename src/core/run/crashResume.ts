import type { OnCrashPolicy, Run } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { closeAttempt, openAttempt } from "./attempts.js";
import type { Changes } from "./changes.js";
import { closeRunWaits } from "./waits.js";
import { closeToolItems, expirePendingRequests } from "./lifecycle.js";
import { EffectKind } from "../../contracts/effects.js";

/**
 * Work after a crash (docs/runs.md): a run whose agent process was lost with
 * its server (a restart, a lost node) starts again as a new attempt of the
 * same run instead of ending `interrupted`, when its policy says resume.
 */

/** Why a run's process can be lost with its server; other losses (a failed start, a crashed session) end the run. */
export const CRASH_REASONS: ReadonlySet<string> = new Set(["server_restarted", "node_lost"]);

/** Resumes of one run after lost processes; the next loss ends it `interrupted`. */
export const MAX_CRASH_RESUMES = 3;

/**
 * The run's policy: the delegation's own `onCrash`, else its provider
 * instance's, else resume for delegated and workflow work (a task's child)
 * and fail for everything else (a person's own thread, which they see stop).
 */
export function crashPolicy(changes: Changes, run: Run, instanceOnCrash: OnCrashPolicy | undefined): OnCrashPolicy {
  const taskId = changes.state.taskByChildThread.get(run.threadId);
  const task = taskId === undefined ? undefined : changes.state.tasks.get(taskId);
  if (task?.onCrash !== undefined) return task.onCrash;
  if (instanceOnCrash !== undefined) return instanceOnCrash;
  return task === undefined ? "fail" : "resume";
}

/**
 * Whether a lost run starts again: a crash reason, its policy, resumes left,
 * and nothing that asked it to stop (an interrupt, a deleted thread). A run
 * still being prepared (worktree, setup, restore) is not resumed: its
 * preparation may be half done, and prepared-run.retry prepares it again.
 */
export function resumesAfterCrash(changes: Changes, run: Run, reason: string, instanceOnCrash: OnCrashPolicy | undefined): boolean {
  if (!CRASH_REASONS.has(reason)) return false;
  if (run.interruptRequestedAt !== null || run.preparation?.status === "preparing") return false;
  if (changes.thread(run.threadId)?.deletedAt != null) return false;
  if ((run.resumes?.length ?? 0) >= MAX_CRASH_RESUMES) return false;
  return crashPolicy(changes, run, instanceOnCrash) === "resume";
}

/**
 * Start the run again: its lost attempt ends `abandoned`, the tool calls it
 * left in progress end `failed` and are named in the resume (the agent is
 * told they may be half done, src/engine/resumeBrief.ts), its pending
 * requests expire (the process that asked is gone; the agent asks again),
 * its open waits end, and the run is `starting` again with a new start
 * effect, so the node that claims it opens a session (resuming the
 * conversation natively where the provider can) as attempt n+1.
 */
export function resumeLostRun(changes: Changes, run: Run, reason: string, message: string): Run {
  const unfinished = changes
    .runItems(run)
    .filter((item) => "status" in item && item.status === "in_progress")
    .map(toolCallOf)
    .filter((call): call is string => call !== null);
  // As at any run's end short of completion, the tool items it left running end failed.
  closeToolItems(changes, run, "interrupted");
  const attempt = openAttempt(changes, run.id);
  const lostAttemptOrdinal = attempt?.attemptOrdinal ?? changes.runAttempts(run.id).length;
  if (attempt !== undefined) closeAttempt(changes, attempt, "abandoned", null);
  expirePendingRequests(changes, run);
  closeRunWaits(changes, run);
  const resumes = [...(run.resumes ?? []), { at: changes.ctx.now, reason, lostAttemptOrdinal, unfinished }];
  changes.addItem(run.threadId, run.id, { type: "system_notice", level: "warning", text: message });
  const resumed = changes.updateRun(run, { status: "starting", resumes });
  changes.effect(EffectKind.startTurn, run.threadId, { threadId: run.threadId, runId: run.id });
  return resumed;
}

/** The notice a resumed run carries: why, and which resume of how many this is. */
export function resumeNotice(reason: string, resumes: number): string {
  const why = reason === "node_lost" ? "the Loom node running it was lost" : "Loom restarted";
  return `This run was working when ${why}; its agent process was lost with it, so the run starts again (resume ${resumes} of at most ${MAX_CRASH_RESUMES}), continuing its conversation where the provider can restore it.`;
}

/** A tool call item in a line a resume brief can name ("command: npm test"); null for an item that is no tool call. */
export function toolCallOf(item: TurnItem): string | null {
  switch (item.type) {
    case "command_execution":
      return `command: ${clip(item.command)}`;
    case "file_change":
      return `file change: ${clip(item.changes.map((change) => change.path).join(", "))}`;
    case "dynamic_tool":
      return `tool call: ${clip(item.toolName)}`;
    default:
      return null;
  }
}

function clip(text: string): string {
  return text.length <= 300 ? text : `${text.slice(0, 299)}…`;
}
