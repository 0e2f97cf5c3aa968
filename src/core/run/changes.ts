import type { NewOutboxEffect } from "../../contracts/envelopes.js";
import type { ContextHandoff, ContextTransfer } from "../../contracts/entities/contextTransfers.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { EFFECTS, type EffectKind, type EffectPayload } from "../../contracts/effects.js";
import type { ProviderThread, ProviderTurn } from "../../contracts/entities/providerRecords.js";
import type { Run, RunAttempt } from "../../contracts/entities/runs.js";
import type { Subagent } from "../../contracts/entities/subagents.js";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import {
  type KnownDomainEvent,
  contextHandoffEvent,
  contextTransferEvent,
  type ThreadEventType,
  providerThreadEvent,
  providerTurnEvent,
  runAttemptEvent,
  runEvent,
  runtimeRequestEvent,
  subagentEvent,
  threadEvent,
  turnItemEvent,
} from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { type Accepted, type DecideContext, accept } from "../decision.js";
import { itemEntityEvents } from "./itemEntities.js";
import type { OrchestrationState } from "../state.js";

/** Distributive Omit, so a union of item shapes stays a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A turn item before the timeline gives it an id, position and times. */
export type TurnItemBody = DistributiveOmit<TurnItem, "id" | "threadId" | "runId" | "position" | "createdAt" | "updatedAt">;

/**
 * The changes one decision makes, with an overlay so later steps of the same
 * decision see earlier ones (a run updated twice, items appended in order).
 * decide stays pure: nothing here touches the state.
 */
export class Changes {
  readonly events: KnownDomainEvent[] = [];
  readonly effects: NewOutboxEffect[] = [];
  private readonly runs = new Map<string, Run>();
  private readonly nextPositions = new Map<string, number>();
  private readonly taskRecords = new Map<string, { subagent: Subagent; task: DelegatedTask }>();
  private readonly attempts = new Map<string, RunAttempt>();
  private readonly providerThreads = new Map<string, ProviderThread>();
  private readonly providerTurns = new Map<string, ProviderTurn>();
  private readonly transferRecords = new Map<string, ContextTransfer>();
  private readonly handoffRecords = new Map<string, ContextHandoff>();
  private readonly threads = new Map<string, AppThread>();
  /** Items added or updated by this decision, so later steps see them. */
  private readonly items = new Map<string, TurnItem>();

  constructor(
    readonly state: OrchestrationState,
    readonly ctx: DecideContext,
  ) {}

  /** A thread as this decision leaves it (one created or changed earlier in it included). */
  thread(threadId: string): AppThread | undefined {
    return this.threads.get(threadId) ?? this.state.threads.get(threadId);
  }

  /** Record a thread event carrying the whole thread; later steps of the decision see the change. */
  putThread(type: ThreadEventType, thread: AppThread): AppThread {
    this.threads.set(thread.id, thread);
    this.events.push(threadEvent(type, thread));
    return thread;
  }

  /** Note a thread as an event other than a thread event leaves it (one carrying the thread beside other data); the caller records that event. */
  recordThread(thread: AppThread): AppThread {
    this.threads.set(thread.id, thread);
    return thread;
  }

  run(runId: string): Run | undefined {
    return this.runs.get(runId) ?? this.state.runs.get(runId);
  }

  /** The thread's runs in ordinal order, as this decision leaves them. */
  threadRuns(threadId: string): Run[] {
    const ids = [...(this.state.threadRuns.get(threadId) ?? [])];
    for (const run of this.runs.values()) {
      if (run.threadId === threadId && !ids.includes(run.id)) ids.push(run.id);
    }
    return ids.map((id) => this.run(id)!).sort((a, b) => a.ordinal - b.ordinal);
  }

  createRun(run: Run): Run {
    this.runs.set(run.id, run);
    this.events.push(runEvent("run.created", run));
    return run;
  }

  updateRun(run: Run, patch: Partial<Run>): Run {
    const next: Run = { ...run, ...patch, updatedAt: this.ctx.now };
    this.runs.set(next.id, next);
    this.events.push(runEvent("run.updated", next));
    return next;
  }

  /** Append an item to the thread's timeline. */
  addItem(threadId: string, runId: string | null, body: TurnItemBody, id: string = this.ctx.allocate.turnItem()): TurnItem {
    const existing = this.existingItem(id);
    const position = existing?.position ?? this.takePosition(threadId);
    const item = {
      ...body,
      id,
      threadId,
      runId,
      position,
      createdAt: existing?.createdAt ?? this.ctx.now,
      updatedAt: this.ctx.now,
    };
    this.events.push(turnItemEvent(item), ...itemEntityEvents(item));
    this.items.set(id, item);
    return item;
  }

  /** Replace an item in place: same id and position. */
  updateItem<T extends TurnItem>(item: T, patch: Partial<T>): T {
    const next = { ...item, ...patch, updatedAt: this.ctx.now };
    this.events.push(turnItemEvent(next), ...itemEntityEvents(next));
    this.items.set(next.id, next);
    return next;
  }

  task(taskId: string): DelegatedTask | undefined {
    return this.taskRecords.get(taskId)?.task ?? this.state.tasks.get(taskId);
  }

  subagent(subagentId: string): Subagent | undefined {
    return this.taskRecords.get(subagentId)?.subagent ?? this.state.subagents.get(subagentId);
  }

  /** Every task as this decision leaves it. */
  allTasks(): DelegatedTask[] {
    const tasks = new Map(this.state.tasks);
    for (const [id, record] of this.taskRecords) tasks.set(id, record.task);
    return [...tasks.values()];
  }

  /** Record a delegated task and its parent subagent projection together (one subagent.updated event). */
  putTask(subagent: Subagent, task: DelegatedTask): DelegatedTask {
    this.taskRecords.set(task.taskId, { subagent, task });
    this.events.push(subagentEvent(subagent, task));
    return task;
  }

  /** Update a task (and optionally its subagent) in place. */
  updateTask(task: DelegatedTask, patch: Partial<DelegatedTask>, subagentPatch: Partial<Subagent> = {}): DelegatedTask {
    const subagent = this.subagent(task.taskId)!;
    const now = this.ctx.now;
    return this.putTask({ ...subagent, ...subagentPatch, updatedAt: now }, { ...task, ...patch, updatedAt: now });
  }

  putRequest(request: RuntimeRequest): RuntimeRequest {
    this.events.push(runtimeRequestEvent(request));
    return request;
  }

  /** Queue an outbox effect; its payload shape and replay safety come from the effect table. */
  effect<K extends EffectKind>(kind: K, threadId: string, payload: EffectPayload<K>): void {
    this.effects.push({ kind, streamId: threadId, payload, replaySafe: EFFECTS[kind].replaySafe });
  }

  attempt(attemptId: string): RunAttempt | undefined {
    return this.attempts.get(attemptId) ?? this.state.attempts.get(attemptId);
  }

  /** The run's attempts in ordinal order, as this decision leaves them. */
  runAttempts(runId: string): RunAttempt[] {
    const ids = [...(this.state.runAttempts.get(runId) ?? [])];
    for (const attempt of this.attempts.values()) {
      if (attempt.runId === runId && !ids.includes(attempt.id)) ids.push(attempt.id);
    }
    return ids.map((id) => this.attempt(id)!).sort((a, b) => a.attemptOrdinal - b.attemptOrdinal);
  }

  createAttempt(attempt: RunAttempt): RunAttempt {
    this.attempts.set(attempt.id, attempt);
    this.events.push(runAttemptEvent("run-attempt.created", attempt));
    return attempt;
  }

  updateAttempt(attempt: RunAttempt, patch: Partial<RunAttempt>): RunAttempt {
    const next: RunAttempt = { ...attempt, ...patch, updatedAt: this.ctx.now };
    this.attempts.set(next.id, next);
    this.events.push(runAttemptEvent("run-attempt.updated", next));
    return next;
  }

  providerThread(id: string): ProviderThread | undefined {
    return this.providerThreads.get(id) ?? this.state.providerThreads.get(id);
  }

  putProviderThread(record: ProviderThread): ProviderThread {
    this.providerThreads.set(record.id, record);
    this.events.push(providerThreadEvent(record));
    return record;
  }

  providerTurn(id: string): ProviderTurn | undefined {
    return this.providerTurns.get(id) ?? this.state.providerTurns.get(id);
  }

  putProviderTurn(record: ProviderTurn): ProviderTurn {
    this.providerTurns.set(record.id, record);
    this.events.push(providerTurnEvent(record));
    return record;
  }

  transfer(id: string): ContextTransfer | undefined {
    return this.transferRecords.get(id) ?? this.state.transfers.get(id);
  }

  /** Record a context transfer (created when new, else updated) so later steps of the decision see it. */
  putTransfer(transfer: ContextTransfer): ContextTransfer {
    const created = this.transfer(transfer.id) === undefined;
    this.transferRecords.set(transfer.id, transfer);
    this.events.push(contextTransferEvent(created ? "context-transfer.created" : "context-transfer.updated", transfer));
    return transfer;
  }

  /** The transfers a thread received or sent, in creation order, as this decision leaves them. */
  threadTransfers(threadId: string): ContextTransfer[] {
    const ids = [...(this.state.threadTransfers.get(threadId) ?? [])];
    for (const transfer of this.transferRecords.values()) {
      if ((transfer.threadId === threadId || transfer.sourceThreadId === threadId) && !ids.includes(transfer.id)) ids.push(transfer.id);
    }
    return ids.map((id) => this.transfer(id)!);
  }

  handoff(id: string): ContextHandoff | undefined {
    return this.handoffRecords.get(id) ?? this.state.handoffs.get(id);
  }

  putHandoff(handoff: ContextHandoff): ContextHandoff {
    this.handoffRecords.set(handoff.id, handoff);
    this.events.push(contextHandoffEvent(handoff));
    return handoff;
  }

  /** The thread's handoffs in creation order, as this decision leaves them. */
  threadHandoffs(threadId: string): ContextHandoff[] {
    const ids = [...(this.state.threadHandoffs.get(threadId) ?? [])];
    for (const handoff of this.handoffRecords.values()) {
      if (handoff.threadId === threadId && !ids.includes(handoff.id)) ids.push(handoff.id);
    }
    return ids.map((id) => this.handoff(id)!);
  }

  done(): Accepted {
    return accept(this.events, this.effects);
  }

  /**
   * The run's items as this decision leaves them, in timeline order, read back
   * from the timeline's tail only as far as the run's creation.
   */
  runItems(run: Run): TurnItem[] {
    const found = new Map<string, TurnItem>();
    for (const item of this.items.values()) if (item.runId === run.id) found.set(item.id, item);
    const items = this.state.turnItems.get(run.threadId) ?? [];
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      if (item === undefined) continue;
      if (item.createdAt < run.createdAt) break;
      if (item.runId === run.id && !found.has(item.id)) found.set(item.id, item);
    }
    return [...found.values()].sort((a, b) => a.position - b.position);
  }

  /** Items added or updated earlier in this decision, as it leaves them. */
  decidedItems(): IterableIterator<TurnItem> {
    return this.items.values();
  }

  /** An item as this decision leaves it (one added or updated earlier in it included). */
  existingItem(id: string): TurnItem | undefined {
    const changed = this.items.get(id);
    if (changed !== undefined) return changed;
    const threadId = this.state.itemThreads.get(id);
    if (threadId === undefined) return undefined;
    return this.state.turnItems.get(threadId)?.find((item) => item?.id === id);
  }

  private takePosition(threadId: string): number {
    const next = this.nextPositions.get(threadId) ?? this.state.turnItems.get(threadId)?.length ?? 0;
    this.nextPositions.set(threadId, next + 1);
    return next;
  }
}
