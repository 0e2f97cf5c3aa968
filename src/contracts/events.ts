import { z } from "zod";
import type { StoredEvent } from "./envelopes.js";
import { type UnknownVariant, decodeForwardCompatible } from "./forwardCompatible.js";
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
import { WorkflowSchema, WorkflowStepSchema, type Workflow, type WorkflowStep } from "./entities/workflows.js";
import { ScheduledFireSchema, ScheduledTaskSchema, type ScheduledFire, type ScheduledTask } from "./entities/scheduledTasks.js";
import { AppThreadSchema } from "./thread.js";
import { TurnItemSchema, type TurnItem } from "./turnItems.js";

/** Thread events all carry the whole thread record after the change. */
const THREAD_EVENT_TYPES = [
  "thread.created",
  "thread.archived",
  "thread.unarchived",
  "thread.deleted",
  "thread.settled",
  "thread.unsettled",
  "thread.snoozed",
  "thread.unsnoozed",
  "thread.pinned",
  "thread.auto-settle-set",
  "thread.unpinned",
  "thread.pin-reordered",
  "thread.active-reordered",
  "thread.visited",
  "thread.marked-unread",
  "thread.metadata-updated",
  "thread.pull-request-link-updated",
  "thread.pull-request-synced",
  "thread.runtime-mode-updated",
  "thread.interaction-mode-updated",
  "thread.model-selection-updated",
  "thread.provider-switched",
] as const;
export type ThreadEventType = (typeof THREAD_EVENT_TYPES)[number];

export const ThreadEventDataSchema = z.object({ thread: AppThreadSchema });
export type ThreadEventData = z.infer<typeof ThreadEventDataSchema>;

export interface ThreadEvent {
  readonly type: ThreadEventType;
  readonly streamId: string;
  readonly data: ThreadEventData;
}

export interface RunEvent {
  readonly type: "run.created" | "run.updated";
  readonly streamId: string;
  readonly data: { readonly run: Run };
}

/** One try at executing a run on a provider session (spec 004 §2, RunAttempt). */
export interface RunAttemptEvent {
  readonly type: "run-attempt.created" | "run-attempt.updated";
  readonly streamId: string;
  readonly data: { readonly attempt: RunAttempt };
}

export interface ProviderThreadEvent {
  readonly type: "provider-thread.updated";
  readonly streamId: string;
  readonly data: { readonly providerThread: ProviderThread };
}

export interface ProviderTurnEvent {
  readonly type: "provider-turn.updated";
  readonly streamId: string;
  readonly data: { readonly providerTurn: ProviderTurn };
}

export interface TurnItemEvent {
  readonly type: "turn-item.updated";
  readonly streamId: string;
  readonly data: { readonly item: TurnItem };
}

export interface RuntimeRequestEvent {
  readonly type: "runtime-request.updated";
  readonly streamId: string;
  readonly data: { readonly request: RuntimeRequest };
}

export interface ProviderSessionEvent {
  readonly type: "provider-session.attached" | "provider-session.updated" | "provider-session.detached";
  readonly streamId: string;
  readonly data: { readonly session: ProviderSession };
}

/** The parent's app-owned subagent projection and, for a delegated task, the task record. */
export interface SubagentEvent {
  readonly type: "subagent.updated";
  readonly streamId: string;
  readonly data: { readonly subagent: Subagent; readonly task: DelegatedTask | null };
}

export interface NodeEvent {
  readonly type: "node.updated";
  readonly streamId: string;
  readonly data: { readonly node: ExecutionNode };
}

export interface ContextTransferEvent {
  readonly type: "context-transfer.created" | "context-transfer.updated";
  readonly streamId: string;
  readonly data: { readonly transfer: ContextTransfer };
}

/** A clientRequestId's first use; environment-wide (stream ""). */
export interface ClientRequestEvent {
  readonly type: "client-request.recorded";
  readonly streamId: string;
  readonly data: { readonly clientRequest: ClientRequestRecord };
}

/** A context handoff after the change (spec 004 §2, OrchestrationV2ContextHandoff): provider switches. */
export interface ContextHandoffEvent {
  readonly type: "context-handoff.updated";
  readonly streamId: string;
  readonly data: { readonly handoff: ContextHandoff };
}

/** A thread's new checkpoint scope: the working tree its checkpoints snapshot. */
export interface CheckpointScopeEvent {
  readonly type: "checkpoint-scope.created";
  readonly streamId: string;
  readonly data: { readonly scope: CheckpointScope };
}

/**
 * The whole checkpoint: emitted when it is captured (any status), and again
 * when a rollback to an earlier checkpoint marks it `stale`.
 */
export interface CheckpointEvent {
  readonly type: "checkpoint.captured";
  readonly streamId: string;
  readonly data: { readonly checkpoint: Checkpoint };
}

export interface CheckpointRollbackEvent {
  readonly type: "checkpoint.rollback-requested";
  readonly streamId: string;
  readonly data: { readonly rollback: CheckpointRollback };
}

/** A scheduled task after the change; `fire` is the fire that changed it (null for a save). Environment-wide (stream ""). */
export interface ScheduledTaskEvent {
  readonly type: "scheduled-task.updated" | "scheduled-task.deleted";
  readonly streamId: string;
  readonly data: { readonly task: ScheduledTask; readonly fire: ScheduledFire | null };
}

/** A workflow after the change (docs/workflows.md). On its parent thread's stream. */
export interface WorkflowEvent {
  readonly type: "workflow.updated";
  readonly streamId: string;
  readonly data: { readonly workflow: Workflow };
}

/**
 * One journal step of a workflow after a change (docs/workflows.md): the step
 * alone, so journaling a call costs the same however long the journal is.
 * Folded into the workflow's `steps` at the step's `index`.
 */
export interface WorkflowStepEvent {
  readonly type: "workflow.step.updated";
  readonly streamId: string;
  readonly data: { readonly workflowId: string; readonly parentThreadId: string; readonly step: WorkflowStep; readonly updatedAt: string };
}

export type KnownDomainEvent =
  | CheckpointScopeEvent
  | CheckpointEvent
  | CheckpointRollbackEvent
  | ThreadEvent
  | RunEvent
  | RunAttemptEvent
  | ProviderThreadEvent
  | ProviderTurnEvent
  | TurnItemEvent
  | RuntimeRequestEvent
  | ProviderSessionEvent
  | SubagentEvent
  | NodeEvent
  | ContextTransferEvent
  | ClientRequestEvent
  | ContextHandoffEvent
  | ScheduledTaskEvent
  | WorkflowEvent
  | WorkflowStepEvent;

/** An event whose type this build does not know: kept, never applied. */
export interface UnknownDomainEvent {
  readonly type: "unknown";
  readonly streamId: string;
  readonly data: UnknownVariant;
}

export type DomainEvent = KnownDomainEvent | UnknownDomainEvent;

function eventSchema(type: string, data: z.ZodType): [string, z.ZodType<KnownDomainEvent>] {
  return [type, z.object({ type: z.literal(type), streamId: z.string(), data }) as unknown as z.ZodType<KnownDomainEvent>];
}

const eventSchemas = new Map<string, z.ZodType<KnownDomainEvent>>([
  ...THREAD_EVENT_TYPES.map((type) => eventSchema(type, ThreadEventDataSchema)),
  eventSchema("run.created", z.object({ run: RunSchema })),
  eventSchema("run.updated", z.object({ run: RunSchema })),
  eventSchema("run-attempt.created", z.object({ attempt: RunAttemptSchema })),
  eventSchema("run-attempt.updated", z.object({ attempt: RunAttemptSchema })),
  eventSchema("provider-thread.updated", z.object({ providerThread: ProviderThreadSchema })),
  eventSchema("provider-turn.updated", z.object({ providerTurn: ProviderTurnSchema })),
  eventSchema("turn-item.updated", z.object({ item: TurnItemSchema })),
  eventSchema("runtime-request.updated", z.object({ request: RuntimeRequestSchema })),
  eventSchema("provider-session.attached", z.object({ session: ProviderSessionSchema })),
  eventSchema("provider-session.updated", z.object({ session: ProviderSessionSchema })),
  eventSchema("provider-session.detached", z.object({ session: ProviderSessionSchema })),
  eventSchema("subagent.updated", z.object({ subagent: SubagentSchema, task: DelegatedTaskSchema.nullable() })),
  eventSchema("node.updated", z.object({ node: ExecutionNodeSchema })),
  eventSchema("context-transfer.created", z.object({ transfer: ContextTransferSchema })),
  eventSchema("context-transfer.updated", z.object({ transfer: ContextTransferSchema })),
  eventSchema("client-request.recorded", z.object({ clientRequest: ClientRequestRecordSchema })),
  eventSchema("context-handoff.updated", z.object({ handoff: ContextHandoffSchema })),
  eventSchema("checkpoint-scope.created", z.object({ scope: CheckpointScopeSchema })),
  eventSchema("checkpoint.captured", z.object({ checkpoint: CheckpointSchema })),
  eventSchema("checkpoint.rollback-requested", z.object({ rollback: CheckpointRollbackSchema })),
  eventSchema("scheduled-task.updated", z.object({ task: ScheduledTaskSchema, fire: ScheduledFireSchema.nullable() })),
  eventSchema("scheduled-task.deleted", z.object({ task: ScheduledTaskSchema, fire: z.null() })),
  eventSchema("workflow.updated", z.object({ workflow: WorkflowSchema })),
  eventSchema("workflow.step.updated", z.object({ workflowId: z.string().min(1), parentThreadId: z.string().min(1), step: WorkflowStepSchema, updatedAt: z.string() })),
]);

export function threadEvent(type: ThreadEventType, thread: ThreadEventData["thread"]): ThreadEvent {
  return { type, streamId: thread.id, data: { thread } };
}

export function runEvent(type: RunEvent["type"], run: Run): RunEvent {
  return { type, streamId: run.threadId, data: { run } };
}

export function runAttemptEvent(type: RunAttemptEvent["type"], attempt: RunAttempt): RunAttemptEvent {
  return { type, streamId: attempt.threadId, data: { attempt } };
}

export function providerThreadEvent(providerThread: ProviderThread): ProviderThreadEvent {
  return { type: "provider-thread.updated", streamId: providerThread.threadId, data: { providerThread } };
}

export function providerTurnEvent(providerTurn: ProviderTurn): ProviderTurnEvent {
  return { type: "provider-turn.updated", streamId: providerTurn.threadId, data: { providerTurn } };
}

export function turnItemEvent(item: TurnItem): TurnItemEvent {
  return { type: "turn-item.updated", streamId: item.threadId, data: { item } };
}

export function runtimeRequestEvent(request: RuntimeRequest): RuntimeRequestEvent {
  return { type: "runtime-request.updated", streamId: request.threadId, data: { request } };
}

export function providerSessionEvent(type: ProviderSessionEvent["type"], session: ProviderSession): ProviderSessionEvent {
  return { type, streamId: session.threadId, data: { session } };
}

/**
 * Decode a stored event. Stored events were validated when written, so this
 * trusts known shapes (no re-validation on the replay hot path) and maps an
 * unknown type to an UnknownDomainEvent.
 */
export function toDomainEvent(event: Pick<StoredEvent, "type" | "streamId" | "data">): DomainEvent {
  if (eventSchemas.has(event.type)) {
    return event as KnownDomainEvent;
  }
  return {
    type: "unknown",
    streamId: event.streamId,
    data: { tag: "unknown", rawTag: event.type, raw: event.data },
  };
}

/** Validate an event from outside (an import, a peer node) before it is trusted. */
export function decodeDomainEvent(raw: unknown): DomainEvent {
  const decoded = decodeForwardCompatible("type", eventSchemas, raw);
  if ("tag" in decoded && decoded.tag === "unknown") {
    const streamId = typeof (raw as { streamId?: unknown }).streamId === "string" ? (raw as { streamId: string }).streamId : "";
    return { type: "unknown", streamId, data: decoded };
  }
  return decoded as KnownDomainEvent;
}

export function subagentEvent(subagent: Subagent, task: DelegatedTask | null): SubagentEvent {
  return { type: "subagent.updated", streamId: subagent.threadId, data: { subagent, task } };
}

export function nodeEvent(node: ExecutionNode): NodeEvent {
  return { type: "node.updated", streamId: node.threadId, data: { node } };
}

export function contextTransferEvent(type: ContextTransferEvent["type"], transfer: ContextTransfer): ContextTransferEvent {
  return { type, streamId: transfer.threadId, data: { transfer } };
}

export function clientRequestEvent(request: ClientRequestRecord): ClientRequestEvent {
  return { type: "client-request.recorded", streamId: "", data: { clientRequest: request } };
}

export function contextHandoffEvent(handoff: ContextHandoff): ContextHandoffEvent {
  return { type: "context-handoff.updated", streamId: handoff.threadId, data: { handoff } };
}

export function checkpointScopeEvent(scope: CheckpointScope): CheckpointScopeEvent {
  return { type: "checkpoint-scope.created", streamId: scope.threadId, data: { scope } };
}

export function checkpointEvent(checkpoint: Checkpoint): CheckpointEvent {
  return { type: "checkpoint.captured", streamId: checkpoint.threadId, data: { checkpoint } };
}

export function checkpointRollbackEvent(rollback: CheckpointRollback): CheckpointRollbackEvent {
  return { type: "checkpoint.rollback-requested", streamId: rollback.threadId, data: { rollback } };
}

export function scheduledTaskEvent(type: ScheduledTaskEvent["type"], task: ScheduledTask, fire: ScheduledFire | null = null): ScheduledTaskEvent {
  return { type, streamId: "", data: { task, fire } };
}

export function workflowEvent(workflow: Workflow): WorkflowEvent {
  return { type: "workflow.updated", streamId: workflow.parentThreadId, data: { workflow } };
}

export function workflowStepEvent(workflow: Workflow, step: WorkflowStep, updatedAt: string): WorkflowStepEvent {
  return { type: "workflow.step.updated", streamId: workflow.parentThreadId, data: { workflowId: workflow.workflowId, parentThreadId: workflow.parentThreadId, step, updatedAt } };
}
