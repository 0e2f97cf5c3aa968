import type { Command } from "../../contracts/commands.js";
import { isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type MergeQueueEntry, MergeQueueStatus } from "../../contracts/entities/mergeQueue.js";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { toDomainEvent } from "../../contracts/events.js";
import { joinId } from "../../core/ids.js";
import { busy } from "../../core/workspace/mergeQueue.js";
import type { Subscription } from "../../store/eventStore.js";
import type { AppContext } from "../context.js";

/**
 * Follows the committed log for the merge queue's waits that no effect holds
 * (docs/workspaces.md, "The merge queue", "Resolver tasks"): an entry queued
 * from a run still going joins the queue once both its threads are idle
 * (merge-queue.ready), and an entry waiting on its resolver is told when the
 * resolver's task ends (merge-queue.resolved), which queues it again or ends
 * it. On start it looks at every waiting entry first, so one whose threads
 * or resolver ended while no server ran picks up. Every node follows; the
 * command ids derive from the entry, so the queue hears it once.
 */
export class MergeQueueReactor {
  private subscription: Subscription | null = null;

  constructor(
    private readonly ctx: Pick<AppContext, "orchestrator">,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    const state = this.ctx.orchestrator.state;
    const from = state.lastSequence;
    for (const entry of state.mergeQueueEntries.values()) this.consider(entry, from);
    this.subscription = this.ctx.orchestrator.follow(from, (event) => this.onEvent(event));
    await this.subscription.caughtUp;
  }

  stop(): void {
    this.subscription?.close();
    this.subscription = null;
  }

  private onEvent(stored: StoredEvent): void {
    const event = toDomainEvent(stored);
    if (event.type === "run.updated" && isTerminalRunStatus(event.data.run.status)) {
      const threadId = event.data.run.threadId;
      for (const entry of this.ctx.orchestrator.state.mergeQueueEntries.values()) {
        if (entry.status === MergeQueueStatus.waitingForIdle && (entry.childThreadId === threadId || entry.parentThreadId === threadId)) this.consider(entry, stored.sequence);
      }
      return;
    }
    if (event.type !== "subagent.updated" || event.data.task === null) return;
    // A task's result reaching its parent (a child waiting for idle threads), or a resolver's task ending.
    const { taskId, childThreadId } = event.data.task;
    for (const entry of this.ctx.orchestrator.state.mergeQueueEntries.values()) {
      if (entry.resolution?.taskId === taskId || (entry.status === MergeQueueStatus.waitingForIdle && entry.childThreadId === childThreadId)) this.consider(entry, stored.sequence);
    }
  }

  private consider(entry: MergeQueueEntry, sequence: number): void {
    if (entry.status === MergeQueueStatus.waitingForIdle) {
      const state = this.ctx.orchestrator.state;
      if (busy(state, entry.parentThreadId) || busy(state, entry.childThreadId)) return;
      // The log position names the attempt: a refusal (a run queued meanwhile) is not the answer to the next one.
      this.send({ type: "merge-queue.ready", commandId: joinId("cmd", "merge-queue-ready", entry.entryId, String(sequence)), data: { parentThreadId: entry.parentThreadId, entryId: entry.entryId } });
      return;
    }
    const resolution = entry.resolution;
    if (entry.status !== MergeQueueStatus.resolving || resolution == null) return;
    const task = this.ctx.orchestrator.state.tasks.get(resolution.taskId);
    if (task !== undefined && !isTerminalDelegatedTaskStatus(task.status)) return;
    this.send({ type: "merge-queue.resolved", commandId: joinId("cmd", "merge-queue-resolved", entry.entryId), data: { parentThreadId: entry.parentThreadId, entryId: entry.entryId } });
  }

  private send(command: Extract<Command, { type: "merge-queue.ready" | "merge-queue.resolved" }>): void {
    this.ctx.orchestrator.dispatch(command).catch((error: unknown) => this.log(`loom: ${command.type} of merge queue entry ${command.data.entryId} failed: ${String(error)}`));
  }
}
