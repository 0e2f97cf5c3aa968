import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** Scheduled tasks (spec 000, Scheduled tasks; docs/schedules.md). */
export function schedulesToolkit(app: App): McpToolkit {
  return defineToolkit("schedules", [
    contractTool("schedule_task", {
      description:
        "Schedule recurring work that runs even when no turn is active: on an interval, daily at HH:MM in the server's local time zone, or on each qualifying webhook request. With scheduledTaskId it updates that task (enabled: false pauses, true resumes). Bound tasks (default when you have a thread in the project) post each fire into your thread, queued behind active work; unbound ones launch a fresh thread each time. Webhooks answer with webhookUrl: without a signature secret, anyone with the URL can trigger a run.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.scheduleTask(callerOfScope(tool.scope), input),
    }),
    contractTool("list_scheduled_tasks", {
      description: "List the scheduled tasks of the environment (or of one project): trigger, enabled, next fire time, webhook URL and the last fire with its run's status.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => Promise.resolve(app.listScheduledTasks(callerOfScope(tool.scope), input)),
    }),
    contractTool("update_scheduled_task", {
      description: "Change a scheduled task: the fields given replace the task's (enabled: false pauses it, true resumes it); the rest stay.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.updateScheduledTask(callerOfScope(tool.scope), input),
    }),
    contractTool("delete_scheduled_task", {
      description: "Delete a scheduled task permanently (pause it with enabled: false instead to keep it). Runs it already started go on.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.deleteScheduledTask(callerOfScope(tool.scope), input),
    }),
    contractTool("run_scheduled_task_now", {
      description: "Fire a scheduled task once, now, through the same path as a timed fire (its overlap policy applies; a paused task fires too). Its schedule does not move.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.runScheduledTaskNow(callerOfScope(tool.scope), input),
    }),
  ]);
}
