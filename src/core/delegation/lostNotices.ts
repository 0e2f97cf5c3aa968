import type { Run } from "../../contracts/entities/runs.js";
import type { Changes } from "../run/changes.js";

/** How often one notice is sent again after its delivery run was lost; past that the result stays readable with task_status. */
export const MAX_NOTICE_REDELIVERIES = 3;

/** Session release reasons that lose a run's agent with its process, as opposed to a deliberate end. */
export const LOST_SESSION_REASONS: ReadonlySet<string> = new Set(["crashed", "server_restarted", "shutdown"]);

/** Items Loom writes into a run itself: none of them shows that the agent read the run's input. */
const LOOM_ITEM_TYPES: ReadonlySet<string> = new Set(["notification", "system_notice", "error", "run_interrupt_request", "run_interrupt_result", "checkpoint"]);

/**
 * A run that carried queued notices ended interrupted by a loss (a restart,
 * a lost node, a crashed session) before its agent produced anything: the
 * notices never reached the agent. Each is marked lost; a completion whose
 * delivery was `delivered` is `pending` again, and a question or approval
 * whose request is still pending is no longer counted as routed, so the
 * delegation reactor delivers it once more (as any notice: steered into the
 * parent's running turn, or a follow-up run). Bounded by MAX_NOTICE_REDELIVERIES.
 */
export function markLostNotices(changes: Changes, run: Run): void {
  if (run.kind !== "system_follow_up") return;
  if (changes.runItems(run).some((item) => !LOOM_ITEM_TYPES.has(item.type))) return;
  for (const candidate of changes.state.tasks.values()) {
    if (candidate.parentThreadId !== run.threadId) continue;
    const task = changes.task(candidate.taskId)!;
    if (!task.notices.some((notice) => notice.runId === run.id && notice.delivery === "queued" && notice.lostAt === undefined)) continue;
    let completionLost = false;
    const notices = task.notices.map((notice) => {
      if (notice.runId !== run.id || notice.delivery !== "queued" || notice.lostAt !== undefined) return notice;
      if (notice.kind === "completion") completionLost = true;
      return { ...notice, lostAt: changes.ctx.now };
    });
    const lostCompletions = notices.filter((notice) => notice.kind === "completion" && notice.lostAt !== undefined).length;
    const again = completionLost && task.completionDelivery === "delivered" && lostCompletions <= MAX_NOTICE_REDELIVERIES;
    changes.updateTask(task, { notices, ...(again ? { completionDelivery: "pending" as const } : {}) });
  }
}

/** The run of the last lost notice of a kind (and request): a redelivery's command id derives from it, so each loss is answered once. */
export function lastLostNoticeRun(notices: readonly { readonly kind: string; readonly requestId: string | null; readonly runId: string | null; readonly lostAt?: string }[], kind: string, requestId: string | null): string | null {
  const lost = notices.filter((notice) => notice.kind === kind && notice.requestId === requestId && notice.lostAt !== undefined);
  return lost[lost.length - 1]?.runId ?? null;
}
