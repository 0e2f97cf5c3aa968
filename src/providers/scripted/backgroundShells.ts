import type { BackgroundTaskEvent, BackgroundTaskKind } from "../events.js";
import { runShellCommand } from "./shell.js";

/**
 * The scripted agent's background shells (a `background` step): commands it
 * leaves running past the step, and past the turn, the way an agent's
 * background shell tool does. Each is reported started at once and ended
 * when it exits, is cancelled or the session stops; the process group is
 * killed on cancel and on stop.
 */

interface Shell {
  readonly runId: string;
  readonly kind: BackgroundTaskKind;
  readonly awaited: boolean;
  readonly command: string;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

export interface BackgroundShellOptions {
  readonly cwd: string;
  /** The longest a background command may run before it is killed. */
  readonly timeoutMs: number;
  readonly emit: (event: BackgroundTaskEvent) => void;
}

export class BackgroundShells {
  private readonly shells = new Map<string, Shell>();
  private counter = 0;
  /** Set by stopAll: the session is closing, and no event follows its stop. */
  private stopped = false;

  constructor(private readonly options: BackgroundShellOptions) {}

  /** Start `command` for run `runId`; returns its task id. */
  start(runId: string, command: string, kind: BackgroundTaskKind, awaited: boolean, env: Readonly<Record<string, string>>): string {
    this.counter += 1;
    const taskId = `bg-${this.counter}`;
    const controller = new AbortController();
    const report = (status: "started" | "ended"): void => {
      if (!this.stopped) this.options.emit({ type: "background_task", runId, taskId, kind, awaited, status, title: command });
    };
    report("started");
    const done = runShellCommand(command, { cwd: this.options.cwd, env, timeoutMs: this.options.timeoutMs, signal: controller.signal }).then(() => {
      this.shells.delete(taskId);
      report("ended");
    });
    this.shells.set(taskId, { runId, kind, awaited, command, controller, done });
    return taskId;
  }

  /** Kill these shells (those already over are ignored); resolves once each has ended and been reported. */
  async cancel(taskIds: readonly string[]): Promise<void> {
    const shells = taskIds.flatMap((taskId) => {
      const shell = this.shells.get(taskId);
      return shell === undefined ? [] : [shell];
    });
    for (const shell of shells) shell.controller.abort();
    await Promise.all(shells.map((shell) => shell.done));
  }

  /** Kill every shell: the session stops. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await this.cancel([...this.shells.keys()]);
  }
}
