import type { AppContext } from "../context.js";
import { uniqueByPrefix } from "../threads/tree.js";

/**
 * A delegated task named by its task id, its child thread's id, or a unique
 * prefix of either (with or without `subagent:` / `thread:`), since people
 * copy whichever id they see. None is task_not_found; several list the candidates.
 */
export function resolveTaskId(ctx: AppContext, ref: string): string {
  const state = ctx.orchestrator.state;
  if (state.tasks.has(ref)) return ref;
  const byChild = state.taskByChildThread.get(ref);
  if (byChild !== undefined) return byChild;
  const candidates = [...state.tasks.values()].map((task) => ({ id: task.taskId, label: task.title, aliases: [task.childThreadId] }));
  return uniqueByPrefix("task", ref, candidates, "task_not_found", ["subagent:", "thread:"]);
}
