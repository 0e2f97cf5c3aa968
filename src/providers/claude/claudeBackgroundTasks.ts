import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import type { BackgroundTaskEvent, BackgroundTaskKind } from "../events.js";

/**
 * Protocol mapping (STYLE rule 4) of Claude Code's background work: a Bash
 * command run in the background, a Task subagent, a Monitor. The Agent SDK
 * brackets each task with `system` messages: `task_started` (with
 * `is_backgrounded` when the spawning tool call does not wait for it) and
 * `task_notification` when it settles (`completed`, `failed`, `stopped`),
 * which may come after the turn's result. A task moved to the background
 * later arrives as `task_updated` with `patch.is_backgrounded`. Ambient
 * housekeeping tasks are left out. No I/O: the only state is which run
 * started each task, so its end names that run whenever it comes.
 */

/** Claude Code's task types (`task_type`) as Loom's kinds: a subagent holds its run; a shell or monitor is not awaited (agents leave dev servers running). */
const KIND_OF_TASK_TYPE: Readonly<Record<string, BackgroundTaskKind>> = {
  local_agent: "subagent",
  local_bash: "command",
  monitor: "monitor",
};

interface Started {
  readonly runId: string;
  readonly kind: BackgroundTaskKind;
  readonly title: string | undefined;
}

export class ClaudeBackgroundTasks {
  /** Tasks known to run in the background, by Claude Code's task_id. */
  private readonly running = new Map<string, Started>();
  /** Foreground tasks seen started, in case they move to the background. */
  private readonly foreground = new Map<string, Started>();

  /** The background_task event a message yields, or null. `runId`: the turn running now, if any. */
  map(message: SDKMessage, runId: string | null): BackgroundTaskEvent | null {
    if (message.type !== "system") return null;
    if (message.subtype === "task_started") {
      if (message.ambient === true || message.skip_transcript === true || runId === null) return null;
      const started: Started = { runId, kind: KIND_OF_TASK_TYPE[message.task_type ?? ""] ?? "background_task", title: message.description };
      if (message.is_backgrounded !== true) {
        this.foreground.set(message.task_id, started);
        return null;
      }
      return this.start(message.task_id, started);
    }
    if (message.subtype === "task_updated") {
      const started = this.foreground.get(message.task_id);
      if (started === undefined || message.patch.is_backgrounded !== true) return null;
      this.foreground.delete(message.task_id);
      return this.start(message.task_id, started);
    }
    if (message.subtype === "task_notification") {
      this.foreground.delete(message.task_id);
      const started = this.running.get(message.task_id);
      if (started === undefined) return null;
      this.running.delete(message.task_id);
      return this.event(message.task_id, started, "ended");
    }
    return null;
  }

  /** Whether a task is running in the background (so stopping it means something). */
  isRunning(taskId: string): boolean {
    return this.running.has(taskId);
  }

  private start(taskId: string, started: Started): BackgroundTaskEvent {
    this.running.set(taskId, started);
    return this.event(taskId, started, "started");
  }

  private event(taskId: string, started: Started, status: "started" | "ended"): BackgroundTaskEvent {
    return {
      type: "background_task",
      runId: started.runId,
      taskId,
      kind: started.kind,
      awaited: false,
      status,
      ...(started.title === undefined ? {} : { title: started.title }),
    };
  }
}
