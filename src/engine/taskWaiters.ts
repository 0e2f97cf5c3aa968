/**
 * delegate_task waits in progress, by task. While a wait is there to hand the
 * parent its task's result or question, the reactor does not also notify the
 * parent (spec 000: "a parent still blocked in a delegate_task wait gets the
 * blocking question through that wait instead"). When the last wait on a task
 * ends without taking its result, listeners hear of it, so a result that
 * arrived as the wait ended is still delivered.
 */
export interface TaskHold {
  /** The wait handed the result to the parent: releasing it needs no delivery. */
  acknowledged(): void;
  /** End the wait. Idempotent. */
  release(): void;
}

export class TaskWaiters {
  private readonly counts = new Map<string, number>();
  private readonly releasedListeners = new Set<(taskId: string) => void>();

  has(taskId: string): boolean {
    return (this.counts.get(taskId) ?? 0) > 0;
  }

  hold(taskId: string): TaskHold {
    this.counts.set(taskId, (this.counts.get(taskId) ?? 0) + 1);
    let released = false;
    let acknowledged = false;
    return {
      acknowledged: () => {
        acknowledged = true;
      },
      release: () => {
        if (released) return;
        released = true;
        const left = (this.counts.get(taskId) ?? 1) - 1;
        if (left === 0) this.counts.delete(taskId);
        else this.counts.set(taskId, left);
        if (!acknowledged) for (const listener of this.releasedListeners) listener(taskId);
      },
    };
  }

  /** Hear of every wait that ended without taking its task's result. */
  onReleased(listener: (taskId: string) => void): () => void {
    this.releasedListeners.add(listener);
    return () => this.releasedListeners.delete(listener);
  }

  private readonly owed = new Map<string, Set<string>>();

  /**
   * The provider cut a wait short while the task's blocking question was
   * pending, so the parent never saw it: the question is owed to the run that
   * waited, and wakes the parent when that run completes, fails or settles its
   * background work (spec 000). Kept in memory: a restart interrupts the run,
   * and an interrupted or stopped parent gets no catch-up anyway.
   */
  oweQuestions(parentRunId: string, taskId: string): void {
    const tasks = this.owed.get(parentRunId) ?? new Set<string>();
    tasks.add(taskId);
    this.owed.set(parentRunId, tasks);
  }

  /** Whether the run is owed any question. */
  owesQuestions(parentRunId: string): boolean {
    return this.owed.has(parentRunId);
  }

  /** The tasks whose questions the run is owed, forgetting them. */
  takeOwedQuestions(parentRunId: string): string[] {
    const tasks = this.owed.get(parentRunId);
    this.owed.delete(parentRunId);
    return tasks === undefined ? [] : [...tasks];
  }
}
