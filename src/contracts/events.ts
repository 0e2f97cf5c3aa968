import { z } from "zod";
import type { StoredEvent } from "./envelopes.js";
import { DecodeError, type UnknownVariant } from "./forwardCompatible.js";
import { ClientRequestRecordSchema, type ClientRequestRecord } from "./entities/clientRequests.js";
import { ContextHandoffSchema, ContextTransferSchema, type ContextHandoff, type ContextTransfer } from "./entities/contextTransfers.js";
import {
  CheckpointRollbackSchema,
  CheckpointSchema,
  CheckpointScopeSchema,
  type Checkpoint,
  type CheckpointRollback,
  type CheckpointScope,
} from "./entities/checkpoints.js";
import { DelegatedTaskSchema, type DelegatedTask } from "./entities/delegatedTasks.js";
import { ProviderThreadSchema, ProviderTurnSchema, type ProviderThread, type ProviderTurn } from "./entities/providerRecords.js";
import { ExecutionNodeSchema, RunAttemptSchema, RunSchema, type ExecutionNode, type Run, type RunAttempt } from "./entities/runs.js";
import { SubagentSchema, type Subagent } from "./entities/subagents.js";
import { ProviderSessionSchema, type ProviderSession } from "./entities/projects.js";
import { RuntimeRequestSchema, type RuntimeRequest } from "./entities/runtimeRequests.js";
import { MergeQueueEntrySchema, type MergeQueueEntry } from "./entities/mergeQueue.js";
import { ProviderLimitWindowSchema, type ProviderLimitWindow } from "./entities/limitWindows.js";
import { WorkflowSchema, WorkflowStepSchema, type Workflow, type WorkflowStep } from "./entities/workflows.js";
import { ScheduledFireSchema, ScheduledTaskSchema, type ScheduledFire, type ScheduledTask } from "./entities/scheduledTasks.js";
import { ToolTaskSchema, type ToolTask } from "./entities/toolTasks.js";
import { MessageRecordSchema, PlanRecordSchema, type MessageRecord, type PlanRecord } from "./entities/transcriptRecords.js";
import { AppThreadSchema, PendingBackgroundTaskSchema } from "./thread.js";
import { TurnItemSchema, type TurnItem } from "./turnItems.js";

/** Thread events all carry the whole thread record after the change. */
export const ThreadEventDataSchema = z.object({ thread: AppThreadSchema });
export type ThreadEventData = z.infer<typeof ThreadEventDataSchema>;

const RunData = z.object({ run: RunSchema });
/** One try at executing a run on a provider session (spec 004 §2, RunAttempt). */
const AttemptData = z.object({ attempt: RunAttemptSchema });
const SessionData = z.object({ session: ProviderSessionSchema });
const TransferData = z.object({ transfer: ContextTransferSchema });

/**
 * The domain events of spec 004 §3.2 this build implements: each event type
 * and the schema of its `data` (DESIGN.md invariant 3: events carry whole
 * entities). The event's TypeScript type, the EventType union, evolve's
 * exhaustive switch and the decoders all derive from this table and
 * LOOM_EVENT_SCHEMAS: adding an event is one entry here plus its schema.
 * The spec's events Loom does not produce yet are named in notImplemented.ts.
 */
export const SPEC_EVENT_SCHEMAS = {
  // Thread state
  "thread.created": ThreadEventDataSchema,
  "thread.archived": ThreadEventDataSchema,
  "thread.unarchived": ThreadEventDataSchema,
  "thread.deleted": ThreadEventDataSchema,
  "thread.settled": ThreadEventDataSchema,
  "thread.unsettled": ThreadEventDataSchema,
  "thread.snoozed": ThreadEventDataSchema,
  "thread.unsnoozed": ThreadEventDataSchema,
  "thread.pinned": ThreadEventDataSchema,
  "thread.auto-settle-set": ThreadEventDataSchema,
  "thread.unpinned": ThreadEventDataSchema,
  "thread.pin-reordered": ThreadEventDataSchema,
  "thread.active-reordered": ThreadEventDataSchema,
  "thread.visited": ThreadEventDataSchema,
  "thread.marked-unread": ThreadEventDataSchema,
  "thread.metadata-updated": ThreadEventDataSchema,
  "thread.pull-request-synced": ThreadEventDataSchema,
  "thread.pull-request-link-updated": ThreadEventDataSchema,
  "thread.runtime-mode-updated": ThreadEventDataSchema,
  "thread.interaction-mode-updated": ThreadEventDataSchema,
  "thread.model-selection-updated": ThreadEventDataSchema,
  "thread.provider-switched": ThreadEventDataSchema,
  /** The thread's guest share after a change: opened, redeemed, a guest message submitted, sent or dismissed, closed. */
  "thread.guest-share-updated": ThreadEventDataSchema,
  // Run, attempt, node and subagent
  "run.created": RunData,
  "run.updated": RunData,
  /**
   * Background work of a run was cancelled (an interrupt or Stop of the run settling it, a settle that timed out, its
   * session gone): `cancelled` names each task, and `thread` is the thread after they left its pendingBackgroundTasks.
   */
  "run.background-work-cancelled": z.object({ thread: AppThreadSchema, runId: z.string().min(1), cancelled: z.array(PendingBackgroundTaskSchema), reason: z.string().min(1) }),
  "run-attempt.created": AttemptData,
  "run-attempt.updated": AttemptData,
  "node.updated": z.object({ node: ExecutionNodeSchema }),
  /** The parent's app-owned subagent projection and, for a delegated task, the task record. */
  "subagent.updated": z.object({ subagent: SubagentSchema, task: DelegatedTaskSchema.nullable() }),
  // Provider and transcript
  "provider-session.attached": SessionData,
  "provider-session.updated": SessionData,
  "provider-session.detached": SessionData,
  "provider-thread.updated": z.object({ providerThread: ProviderThreadSchema }),
  "provider-turn.updated": z.object({ providerTurn: ProviderTurnSchema }),
  "runtime-request.updated": z.object({ request: RuntimeRequestSchema }),
  "turn-item.updated": z.object({ item: TurnItemSchema }),
  /** A user or assistant message after a change, beside the turn-item.updated of its item in the same commit: identity and state, no text (docs/wire.md, "Messages and plans"). */
  "message.updated": z.object({ message: MessageRecordSchema }),
  /** A proposed plan after a change, beside the turn-item.updated of its item in the same commit: identity, title and step statuses, no markdown. */
  "plan.updated": z.object({ plan: PlanRecordSchema }),
  // Checkpoint and context transfer
  /** A thread's new checkpoint scope: the working tree its checkpoints snapshot. */
  "checkpoint-scope.created": z.object({ scope: CheckpointScopeSchema }),
  /** The whole checkpoint: when it is captured (any status), and again when a rollback to an earlier one marks it `stale`. */
  "checkpoint.captured": z.object({ checkpoint: CheckpointSchema }),
  "checkpoint.rollback-requested": z.object({ rollback: CheckpointRollbackSchema }),
  /** A context handoff after the change (spec 004 §2, OrchestrationV2ContextHandoff): provider switches. */
  "context-handoff.updated": z.object({ handoff: ContextHandoffSchema }),
  "context-transfer.created": TransferData,
  "context-transfer.updated": TransferData,
} as const;

/** Loom's own events, outside spec 004's list. */
export const LOOM_EVENT_SCHEMAS = {
  /** The first use of a clientRequestId and its request fingerprint (docs/mcp.md, Idempotency); environment-wide (stream ""). */
  "client-request.recorded": z.object({ clientRequest: ClientRequestRecordSchema }),
  /** A thread whose limit recovery changed: a usage limit stopped its run (recorded, with its snooze), or its work resumed or moved on (cleared). */
  "thread.limit-recovery-updated": ThreadEventDataSchema,
  /** A thread's pendingBackgroundTasks after a driver reported background work started or ended (docs/runs.md, "Background work"). */
  "thread.background-tasks-updated": ThreadEventDataSchema,
  /** A scheduled task after a change or a fire (docs/schedules.md); `fire` is the fire that changed it (null for a save). Environment-wide. */
  "scheduled-task.updated": z.object({ task: ScheduledTaskSchema, fire: ScheduledFireSchema.nullable() }),
  /** A scheduled task deleted for good. */
  "scheduled-task.deleted": z.object({ task: ScheduledTaskSchema, fire: z.null() }),
  /** A workflow script's record after a change: its journal of steps, phase, status, result (docs/workflows.md). On its parent thread's stream. */
  "workflow.updated": z.object({ workflow: WorkflowSchema }),
  /**
   * One journal step of a workflow after a change: the step alone, so
   * journaling a call costs the same however long the journal is. Folded
   * into the workflow's `steps` at the step's `index`.
   */
  "workflow.step.updated": z.object({ workflowId: z.string().min(1), parentThreadId: z.string().min(1), step: WorkflowStepSchema, updatedAt: z.string() }),
  /** A tool call served as an MCP task, after a change (docs/mcp.md, "Tasks"). On its owner thread's stream ("" for the owner's). */
  "tool-task.updated": z.object({ task: ToolTaskSchema }),
  /** A merge queue entry after a change: queued, begun, ended, cancelled (docs/workspaces.md, "The merge queue"). On its parent thread's stream. */
  "merge-queue.entry-updated": z.object({ entry: MergeQueueEntrySchema }),
  /** A provider instance's usage limit window, recorded as a session met the limit (docs/limits.md, "Unavailable until the reset"). Environment-wide. */
  "provider-instance.limit-window-updated": z.object({ window: ProviderLimitWindowSchema }),
} as const;

/** Every event type this build knows, and its data schema. */
export const EVENT_SCHEMAS = { ...SPEC_EVENT_SCHEMAS, ...LOOM_EVENT_SCHEMAS } as const;
export type EventType = keyof typeof EVENT_SCHEMAS;
export type EventData<T extends EventType> = z.infer<(typeof EVENT_SCHEMAS)[T]>;

/** Each type's data schema by its own type: a lookup with a generic key keeps the key's data type. */
const dataSchemas: { readonly [T in EventType]: z.ZodType<EventData<T>> } = EVENT_SCHEMAS;

const eventTypeSet: ReadonlySet<string> = new Set(Object.keys(EVENT_SCHEMAS));
export const EVENT_TYPES: readonly EventType[] = Object.keys(EVENT_SCHEMAS).filter(isEventType);

export function isEventType(value: string): value is EventType {
  return eventTypeSet.has(value);
}

/** One event of a known type: `{ type, streamId, data }`. */
export interface DomainEventOf<T extends EventType> {
  readonly type: T;
  /** The thread the event belongs to, or "" for environment-wide events. */
  readonly streamId: string;
  readonly data: EventData<T>;
}

/** The events of the given types, one union member per type. */
export type EventOf<T extends EventType> = { [K in T]: DomainEventOf<K> }[T];
export type KnownDomainEvent = EventOf<EventType>;

/** An event whose type this build does not know: kept, never applied. */
export interface UnknownDomainEvent {
  readonly type: "unknown";
  readonly streamId: string;
  readonly data: UnknownVariant;
}

export type DomainEvent = KnownDomainEvent | UnknownDomainEvent;

/** The event types whose data is exactly the whole thread. */
export type ThreadEventType = { [T in EventType]: ThreadEventData extends EventData<T> ? (EventData<T> extends ThreadEventData ? T : never) : never }[EventType];
export type ThreadEvent = EventOf<ThreadEventType>;
export type RunEvent = EventOf<"run.created" | "run.updated">;
export type RunAttemptEvent = EventOf<"run-attempt.created" | "run-attempt.updated">;
export type ProviderSessionEvent = EventOf<"provider-session.attached" | "provider-session.updated" | "provider-session.detached">;
export type ContextTransferEvent = EventOf<"context-transfer.created" | "context-transfer.updated">;
export type ScheduledTaskEvent = EventOf<"scheduled-task.updated" | "scheduled-task.deleted">;

/**
 * Decode a stored event. Stored events were validated when written, so this
 * trusts known shapes (no re-validation on the replay hot path) and maps an
 * unknown type to an UnknownDomainEvent.
 */
export function toDomainEvent(event: Pick<StoredEvent, "type" | "streamId" | "data">): DomainEvent {
  if (eventTypeSet.has(event.type)) {
    return event as KnownDomainEvent;
  }
  return {
    type: "unknown",
    streamId: event.streamId,
    data: { tag: "unknown", rawTag: event.type, raw: event.data },
  };
}

/**
 * Validate an event from outside (an import, a peer node) before it is
 * trusted: a known type's data must match its schema (else DecodeError); an
 * unknown type is kept as an UnknownDomainEvent (spec 004 §1.2).
 */
export function decodeDomainEvent(raw: unknown): DomainEvent {
  if (typeof raw !== "object" || raw === null) throw new DecodeError('expected an object with a "type" tag');
  const { type, streamId, data } = raw as { type?: unknown; streamId?: unknown; data?: unknown };
  if (typeof type !== "string") throw new DecodeError('missing string tag "type"');
  if (!isEventType(type)) {
    return { type: "unknown", streamId: typeof streamId === "string" ? streamId : "", data: { tag: "unknown", rawTag: type, raw } };
  }
  if (typeof streamId !== "string") throw new DecodeError(`invalid ${type}: streamId: expected a string`);
  return decodeKnown(type, streamId, data);
}

function decodeKnown<T extends EventType>(type: T, streamId: string, data: unknown): EventOf<T> {
  const parsed = dataSchemas[type].safeParse(data);
  if (!parsed.success) {
    throw new DecodeError(`invalid ${type}: ${parsed.error.issues.map((i) => `${["data", ...i.path].join(".")}: ${i.message}`).join("; ")}`);
  }
  const event: DomainEventOf<T> = { type, streamId, data: parsed.data };
  return event;
}

export function threadEvent(type: ThreadEventType, thread: ThreadEventData["thread"]): ThreadEvent {
  return { type, streamId: thread.id, data: { thread } };
}

export function runEvent(type: RunEvent["type"], run: Run): RunEvent {
  return { type, streamId: run.threadId, data: { run } };
}

export function runAttemptEvent(type: RunAttemptEvent["type"], attempt: RunAttempt): RunAttemptEvent {
  return { type, streamId: attempt.threadId, data: { attempt } };
}

export function providerThreadEvent(providerThread: ProviderThread): EventOf<"provider-thread.updated"> {
  return { type: "provider-thread.updated", streamId: providerThread.threadId, data: { providerThread } };
}

export function providerTurnEvent(providerTurn: ProviderTurn): EventOf<"provider-turn.updated"> {
  return { type: "provider-turn.updated", streamId: providerTurn.threadId, data: { providerTurn } };
}

export function turnItemEvent(item: TurnItem): EventOf<"turn-item.updated"> {
  return { type: "turn-item.updated", streamId: item.threadId, data: { item } };
}

export function messageEvent(message: MessageRecord): EventOf<"message.updated"> {
  return { type: "message.updated", streamId: message.threadId, data: { message } };
}

export function planEvent(plan: PlanRecord): EventOf<"plan.updated"> {
  return { type: "plan.updated", streamId: plan.threadId, data: { plan } };
}

export function runtimeRequestEvent(request: RuntimeRequest): EventOf<"runtime-request.updated"> {
  return { type: "runtime-request.updated", streamId: request.threadId, data: { request } };
}

export function providerSessionEvent(type: ProviderSessionEvent["type"], session: ProviderSession): ProviderSessionEvent {
  return { type, streamId: session.threadId, data: { session } };
}

export function subagentEvent(subagent: Subagent, task: DelegatedTask | null): EventOf<"subagent.updated"> {
  return { type: "subagent.updated", streamId: subagent.threadId, data: { subagent, task } };
}

export function nodeEvent(node: ExecutionNode): EventOf<"node.updated"> {
  return { type: "node.updated", streamId: node.threadId, data: { node } };
}

export function contextTransferEvent(type: ContextTransferEvent["type"], transfer: ContextTransfer): ContextTransferEvent {
  return { type, streamId: transfer.threadId, data: { transfer } };
}

export function clientRequestEvent(request: ClientRequestRecord): EventOf<"client-request.recorded"> {
  return { type: "client-request.recorded", streamId: "", data: { clientRequest: request } };
}

export function contextHandoffEvent(handoff: ContextHandoff): EventOf<"context-handoff.updated"> {
  return { type: "context-handoff.updated", streamId: handoff.threadId, data: { handoff } };
}

export function checkpointScopeEvent(scope: CheckpointScope): EventOf<"checkpoint-scope.created"> {
  return { type: "checkpoint-scope.created", streamId: scope.threadId, data: { scope } };
}

export function checkpointEvent(checkpoint: Checkpoint): EventOf<"checkpoint.captured"> {
  return { type: "checkpoint.captured", streamId: checkpoint.threadId, data: { checkpoint } };
}

export function checkpointRollbackEvent(rollback: CheckpointRollback): EventOf<"checkpoint.rollback-requested"> {
  return { type: "checkpoint.rollback-requested", streamId: rollback.threadId, data: { rollback } };
}

export function scheduledTaskEvent(type: ScheduledTaskEvent["type"], task: ScheduledTask, fire: ScheduledFire | null = null): ScheduledTaskEvent {
  return type === "scheduled-task.deleted" ? { type, streamId: "", data: { task, fire: null } } : { type, streamId: "", data: { task, fire } };
}

export function workflowEvent(workflow: Workflow): EventOf<"workflow.updated"> {
  return { type: "workflow.updated", streamId: workflow.parentThreadId, data: { workflow } };
}

export function workflowStepEvent(workflow: Workflow, step: WorkflowStep, updatedAt: string): EventOf<"workflow.step.updated"> {
  return { type: "workflow.step.updated", streamId: workflow.parentThreadId, data: { workflowId: workflow.workflowId, parentThreadId: workflow.parentThreadId, step, updatedAt } };
}

export function mergeQueueEvent(entry: MergeQueueEntry): EventOf<"merge-queue.entry-updated"> {
  return { type: "merge-queue.entry-updated", streamId: entry.parentThreadId, data: { entry } };
}

export function toolTaskEvent(task: ToolTask): EventOf<"tool-task.updated"> {
  return { type: "tool-task.updated", streamId: task.ownerThreadId ?? "", data: { task } };
}

export function limitWindowEvent(window: ProviderLimitWindow): EventOf<"provider-instance.limit-window-updated"> {
  return { type: "provider-instance.limit-window-updated", streamId: "", data: { window } };
}
