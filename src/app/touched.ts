import type { StoredEvent } from "../contracts/envelopes.js";
import type { ContextHandoff, ContextTransfer } from "../contracts/entities/contextTransfers.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { Run } from "../contracts/entities/runs.js";
import { toDomainEvent } from "../contracts/events.js";
import type { AppThread } from "../contracts/thread.js";
import type { TurnItem } from "../contracts/turnItems.js";

/**
 * The entities a command touched, read from the events it wrote (each event
 * carries the whole entity after the change), latest version of each.
 */
export interface Touched {
  readonly threads: ReadonlyMap<string, AppThread>;
  readonly runs: ReadonlyMap<string, Run>;
  readonly items: ReadonlyMap<string, TurnItem>;
  readonly tasks: ReadonlyMap<string, DelegatedTask>;
  readonly transfers: ReadonlyMap<string, ContextTransfer>;
  readonly handoffs: ReadonlyMap<string, ContextHandoff>;
}

export function touched(events: readonly StoredEvent[]): Touched {
  const threads = new Map<string, AppThread>();
  const runs = new Map<string, Run>();
  const items = new Map<string, TurnItem>();
  const tasks = new Map<string, DelegatedTask>();
  const transfers = new Map<string, ContextTransfer>();
  const handoffs = new Map<string, ContextHandoff>();
  for (const stored of events) {
    const event = toDomainEvent(stored);
    switch (event.type) {
      case "run.created":
      case "run.updated":
        runs.set(event.data.run.id, event.data.run);
        break;
      case "turn-item.updated":
        items.set(event.data.item.id, event.data.item);
        break;
      case "subagent.updated":
        if (event.data.task !== null) tasks.set(event.data.task.taskId, event.data.task);
        break;
      case "run-attempt.created":
      case "run-attempt.updated":
      case "provider-thread.updated":
      case "provider-turn.updated":
      case "runtime-request.updated":
      case "message.updated":
      case "plan.updated":
      case "provider-session.attached":
      case "provider-session.updated":
      case "provider-session.detached":
      case "node.updated":
      case "client-request.recorded":
      case "scheduled-task.updated":
      case "scheduled-task.deleted":
      case "workflow.updated":
      case "workflow.step.updated":
      case "merge-queue.entry-updated":
      case "tool-task.updated":
      case "provider-instance.limit-window-updated":
      case "unknown":
        break;
      case "context-transfer.created":
      case "context-transfer.updated":
        transfers.set(event.data.transfer.id, event.data.transfer);
        break;
      case "context-handoff.updated":
        handoffs.set(event.data.handoff.id, event.data.handoff);
        break;
      case "checkpoint-scope.created":
      case "checkpoint.captured":
      case "checkpoint.rollback-requested":
        break;
      default:
        threads.set(event.data.thread.id, event.data.thread);
    }
  }
  return { threads, runs, items, tasks, transfers, handoffs };
}

/** The user message with this id among the touched items, if the command wrote it. */
export function touchedUserMessage(found: Touched, messageId: string): Extract<TurnItem, { type: "user_message" }> | undefined {
  for (const item of found.items.values()) {
    if (item.type === "user_message" && item.messageId === messageId) return item;
  }
  return undefined;
}
