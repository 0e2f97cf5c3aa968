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
}
