import type { z } from "zod";
import * as delegation from "./commands/delegationCommands.js";
import * as failover from "./commands/failoverCommands.js";
import * as guestShare from "./commands/guestShareCommands.js";
import * as lineage from "./commands/lineageCommands.js";
import * as mergeQueue from "./commands/mergeQueueCommands.js";
import * as notice from "./commands/noticeCommands.js";
import * as pullRequest from "./commands/pullRequestCommands.js";
import * as run from "./commands/runCommands.js";
import * as runtime from "./commands/runtimeCommands.js";
import * as schedule from "./commands/scheduleCommands.js";
import * as secret from "./commands/secretCommands.js";
import * as thread from "./commands/threadCommands.js";
import * as toolTask from "./commands/toolTaskCommands.js";
import * as wait from "./commands/waitCommands.js";
import * as workflow from "./commands/workflowCommands.js";
import * as workspace from "./commands/workspaceCommands.js";
import { notImplemented } from "./notImplemented.js";
import { formatZodIssues } from "./zodIssues.js";

/**
 * The command tables: each command type and the schema of the whole command
 * (`{ type, commandId, data, clientRequest? }`), kept in its family's file
 * under commands/. Every command's TypeScript type, the Command unions and
 * parseCommand derive from these tables, and the decider's exhaustive switch
 * is over their names: adding a command is one entry here plus its schema.
 * The spec's commands Loom does not implement yet are named in
 * notImplemented.ts.
 */

/** A table whose every key is its schema's `type`: a mismatch is a compile error. */
function commandTable<T extends { readonly [K in keyof T]: z.ZodType<{ readonly type: K }> }>(table: T): T {
  return table;
}

/** Spec 004 §3.1's public commands this build implements: outside clients may send them. */
export const PUBLIC_COMMAND_SCHEMAS = commandTable({
  // Thread lifecycle and organization
  "thread.stop": run.ThreadStopCommandSchema,
  "thread.create": thread.ThreadCreateCommandSchema,
  "thread.archive": thread.ThreadArchiveCommandSchema,
  "thread.unarchive": thread.ThreadUnarchiveCommandSchema,
  "thread.delete": thread.ThreadDeleteCommandSchema,
  "thread.settle": thread.ThreadSettleCommandSchema,
  "thread.auto-settle": thread.ThreadAutoSettleCommandSchema,
  "thread.unsettle": thread.ThreadUnsettleCommandSchema,
  "thread.snooze": thread.ThreadSnoozeCommandSchema,
  "thread.unsnooze": thread.ThreadUnsnoozeCommandSchema,
  "thread.auto-settle.set": thread.ThreadAutoSettleSetCommandSchema,
  "thread.pin": thread.ThreadPinCommandSchema,
  "thread.unpin": thread.ThreadUnpinCommandSchema,
  "thread.pin.reorder": thread.ThreadPinReorderCommandSchema,
  "thread.active.reorder": thread.ThreadActiveReorderCommandSchema,
  "thread.visit": thread.ThreadVisitCommandSchema,
  "thread.mark-unread": thread.ThreadMarkUnreadCommandSchema,
  "thread.metadata.update": thread.ThreadMetadataUpdateCommandSchema,
  "thread.pull-request.link": thread.ThreadPullRequestLinkCommandSchema,
  "thread.pull-request.unlink": thread.ThreadPullRequestUnlinkCommandSchema,
  "thread.pull-request-link.sync": pullRequest.ThreadPullRequestLinkSyncCommandSchema,
  "thread.pull-request.watch": pullRequest.ThreadPullRequestWatchCommandSchema,
  "thread.pull-request.sync": pullRequest.ThreadPullRequestSyncCommandSchema,
  "thread.title.regeneration.complete": notice.ThreadTitleRegenerationCompleteCommandSchema,
  "thread.runtime-mode.set": thread.ThreadRuntimeModeSetCommandSchema,
  "thread.interaction-mode.set": thread.ThreadInteractionModeSetCommandSchema,
  "thread.model-selection.set": thread.ThreadModelSelectionSetCommandSchema,
  "thread.guest-share.close": guestShare.GuestShareCloseCommandSchema,
  "thread.guest-message.dismiss": guestShare.GuestMessageDismissCommandSchema,
  // Session, message dispatch, prepared runs and queue
  "provider-session.detach": run.ProviderSessionDetachCommandSchema,
  "message.dispatch": run.MessageDispatchCommandSchema,
  "prepared-run.release": workspace.PreparedRunReleaseCommandSchema,
  "notification.delivery.accept": notice.NotificationDeliveryAcceptCommandSchema,
  "prepared-run.progress": workspace.PreparedRunProgressCommandSchema,
  "prepared-run.fail": workspace.PreparedRunFailCommandSchema,
  "prepared-run.retry": workspace.PreparedRunRetryCommandSchema,
  "subagent.stop": delegation.SubagentStopCommandSchema,
  "run.interrupt": run.RunInterruptCommandSchema,
  "queued-message.promote-to-steer": run.QueuedMessagePromoteToSteerCommandSchema,
  "queue.resume": run.QueueResumeCommandSchema,
  "queued-run.start": run.QueuedRunStartCommandSchema,
  "queued-run.reorder": run.QueuedRunReorderCommandSchema,
  "queued-run.cancel": run.QueuedRunCancelCommandSchema,
  "queued-run.edit": run.QueuedRunEditCommandSchema,
  // Runtime requests and checkpoints
  "runtime-request.respond": run.RuntimeRequestRespondCommandSchema,
  "thread.user-input.dismiss": run.ThreadUserInputDismissCommandSchema,
  "checkpoint.rollback": workspace.CheckpointRollbackCommandSchema,
  // Lineage, delegation and provider switching
  "thread.fork": lineage.ThreadForkCommandSchema,
  "thread.merge_back": lineage.ThreadMergeBackCommandSchema,
  "delegated_task.request": delegation.DelegatedTaskRequestCommandSchema,
  "delegated_task.wake-policy": delegation.DelegatedTaskWakePolicyCommandSchema,
  "delegated_task.completion-delivery.acknowledge": delegation.CompletionDeliveryAcknowledgeCommandSchema,
  "delegated_task.completion-delivery.dispose": delegation.CompletionDeliveryDisposeCommandSchema,
  "thread.created.record": notice.ThreadCreatedRecordCommandSchema,
  "provider.switch": lineage.ProviderSwitchCommandSchema,
} as const);

/** Spec 004 §3.1's internal commands this build implements: only the server sends them (parseCommand refuses them from outside). */
export const INTERNAL_COMMAND_SCHEMAS = commandTable({
  "thread.pull-request-watch.sync": pullRequest.ThreadPullRequestWatchSyncCommandSchema,
  "checkpoint.rollback.fail": workspace.CheckpointRollbackFailCommandSchema,
  "runtime-request.delivery.fail": run.RuntimeRequestDeliveryFailCommandSchema,
  "thread.background-work.settle": run.ThreadBackgroundWorkSettleCommandSchema,
  "secret_request.record": secret.SecretRequestRecordCommandSchema,
  "thread.guest-share.open": guestShare.GuestShareOpenCommandSchema,
  "thread.guest-share.redeem": guestShare.GuestShareRedeemCommandSchema,
  "thread.guest-message.submit": guestShare.GuestMessageSubmitCommandSchema,
} as const);

/**
 * Loom's own commands, outside spec 004's sets: runtime ingestion, recorded
 * waits, scheduled tasks, workflow scripts. Only the engine and the app
 * dispatch them; parseCommand does not know their names.
 */
export const LOOM_COMMAND_SCHEMAS = commandTable({
  // Runtime ingestion from providers and the engine (commands/runtimeCommands.ts)
  "provider-runtime.session-opened": runtime.SessionOpenedCommandSchema,
  "provider-runtime.session-released": runtime.SessionReleasedCommandSchema,
  "provider-runtime.attempt-started": runtime.AttemptStartedCommandSchema,
  "provider-runtime.turn-started": runtime.TurnStartedCommandSchema,
  "provider-runtime.usage-reported": runtime.UsageReportedCommandSchema,
  "provider-runtime.item-completed": runtime.ItemCompletedCommandSchema,
  "provider-runtime.background-task": runtime.BackgroundTaskReportedCommandSchema,
  "provider-runtime.turn-completed": runtime.TurnCompletedCommandSchema,
  "provider-runtime.run-lost": runtime.RunLostCommandSchema,
  "thread.limit-recovery.resume": runtime.LimitRecoveryResumeCommandSchema,
  "thread.limit-recovery.fail-over": failover.LimitRecoveryFailOverCommandSchema,
  "provider-instance.limit-window.record": failover.LimitWindowRecordCommandSchema,
  "delegated-task.deliver-notice": runtime.DeliverTaskNoticeCommandSchema,
  "delegated-task.finalize": runtime.FinalizeTaskCommandSchema,
  "workspace-runtime.checkpoint-captured": runtime.CheckpointCapturedCommandSchema,
  "delegated-task.budget-exceed": runtime.BudgetExceedCommandSchema,
  "thread.budget.set": runtime.ThreadBudgetSetCommandSchema,
  "thread.budget-exceed": runtime.ThreadBudgetExceedCommandSchema,
  "budget.raise": runtime.BudgetRaiseCommandSchema,
  // Recorded waits (commands/waitCommands.ts)
  "thread-wait.started": wait.WaitStartedCommandSchema,
  "thread-wait.ended": wait.WaitEndedCommandSchema,
  "delegated-task.wait-hold": wait.TaskWaitHoldCommandSchema,
  "delegated-task.wait-release": wait.TaskWaitReleaseCommandSchema,
  "delegated-task.waits-lost": wait.TaskWaitsLostCommandSchema,
  // Tool calls served as MCP tasks (commands/toolTaskCommands.ts)
  "tool-task.create": toolTask.ToolTaskCreateCommandSchema,
  "tool-task.cancel": toolTask.ToolTaskCancelCommandSchema,
  // Scheduled tasks (commands/scheduleCommands.ts)
  "scheduled-task.save": schedule.ScheduledTaskSaveCommandSchema,
  "scheduled-task.delete": schedule.ScheduledTaskDeleteCommandSchema,
  "scheduled-task.fire": schedule.ScheduledTaskFireCommandSchema,
  // Workflow scripts (commands/workflowCommands.ts)
  "workflow.start": workflow.WorkflowStartCommandSchema,
  "workflow.progress": workflow.WorkflowProgressCommandSchema,
  "workflow.step.start": workflow.WorkflowStepStartCommandSchema,
  "workflow.step.finish": workflow.WorkflowStepFinishCommandSchema,
  "workflow.step.reissue": workflow.WorkflowStepReissueCommandSchema,
  "workflow.finish": workflow.WorkflowFinishCommandSchema,
  "workflow.stop": workflow.WorkflowStopCommandSchema,
  // The merge queue of a parent workspace (commands/mergeQueueCommands.ts)
  "merge-queue.enqueue": mergeQueue.MergeQueueEnqueueCommandSchema,
  "merge-queue.cancel": mergeQueue.MergeQueueCancelCommandSchema,
  "merge-queue.start": mergeQueue.MergeQueueStartCommandSchema,
  "merge-queue.finish": mergeQueue.MergeQueueFinishCommandSchema,
  "merge-queue.resolve": mergeQueue.MergeQueueResolveCommandSchema,
  "merge-queue.resolved": mergeQueue.MergeQueueResolvedCommandSchema,
  "merge-queue.ready": mergeQueue.MergeQueueReadyCommandSchema,
} as const);

/** Every command this build can decide, and its schema. */
export const COMMAND_SCHEMAS = { ...PUBLIC_COMMAND_SCHEMAS, ...INTERNAL_COMMAND_SCHEMAS, ...LOOM_COMMAND_SCHEMAS } as const;
export type CommandType = keyof typeof COMMAND_SCHEMAS;
export type CommandOf<T extends CommandType> = z.infer<(typeof COMMAND_SCHEMAS)[T]>;
type PublicCommandType = keyof typeof PUBLIC_COMMAND_SCHEMAS;
type InternalCommandType = keyof typeof INTERNAL_COMMAND_SCHEMAS;

/** Commands that outside clients may send (after validation). */
export type ClientCommand = CommandOf<PublicCommandType>;
/** Spec 004's internal commands this build implements: only the server sends them. */
export type InternalCommand = CommandOf<InternalCommandType>;
/** Every command this build can decide, including the engine's runtime ingestion, recorded waits, schedules and workflows. */
export type Command = CommandOf<CommandType>;

export const COMMAND_TYPES: readonly CommandType[] = Object.keys(COMMAND_SCHEMAS).filter(isCommandType);

function isCommandType(value: string): value is CommandType {
  return Object.hasOwn(COMMAND_SCHEMAS, value);
}

/** Each type's schema by its own type: a lookup with a generic key keeps the key's command type. */
const commandSchemas: { readonly [T in CommandType]: z.ZodType<CommandOf<T>> } = COMMAND_SCHEMAS;

/** Decode one command of the table (validated by its schema): what the engine may dispatch. */
export function decodeCommand<T extends CommandType>(type: T, raw: unknown): z.ZodSafeParseResult<CommandOf<T>> {
  return commandSchemas[type].safeParse(raw);
}

export type CommandParseFailure =
  | { readonly code: "invalid_command"; readonly message: string }
  | { readonly code: "unknown_command_type"; readonly message: string }
  | { readonly code: "unsupported_command"; readonly message: string }
  | { readonly code: "internal_command"; readonly message: string };

export type CommandParseResult = { readonly ok: true; readonly command: ClientCommand | InternalCommand } | { readonly ok: false; readonly failure: CommandParseFailure };

function isPublicCommandType(type: string): type is PublicCommandType {
  return Object.hasOwn(PUBLIC_COMMAND_SCHEMAS, type);
}

function isInternalCommandType(type: string): type is InternalCommandType {
  return Object.hasOwn(INTERNAL_COMMAND_SCHEMAS, type);
}

/** A name of spec 004 §3.1 as parseCommand sees it: public or internal, and this build's type when it implements it. */
function specCommand(type: string): { readonly scope: "public" | "internal"; readonly implemented: PublicCommandType | InternalCommandType | null } | null {
  if (isPublicCommandType(type)) return { scope: "public", implemented: type };
  if (isInternalCommandType(type)) return { scope: "internal", implemented: type };
  const listed = notImplemented(type);
  if (listed?.kind === "public-command") return { scope: "public", implemented: null };
  if (listed?.kind === "internal-command") return { scope: "internal", implemented: null };
  return null;
}

/** The command types this build accepts from a caller, sorted: an unknown type's error lists them. */
export function acceptedTypes(allowInternal: boolean): string[] {
  return [...Object.keys(PUBLIC_COMMAND_SCHEMAS), ...(allowInternal ? Object.keys(INTERNAL_COMMAND_SCHEMAS) : [])].sort();
}

/**
 * Validate a command. Nothing is written for a failure. Outside clients pass
 * `allowInternal: false`: internal commands come only from the engine.
 */
export function parseCommand(raw: unknown, options: { readonly allowInternal: boolean } = { allowInternal: true }): CommandParseResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, failure: { code: "invalid_command", message: "a command must be a JSON object { type, commandId, data }" } };
  }
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== "string") {
    return { ok: false, failure: { code: "invalid_command", message: 'missing string field "type"' } };
  }
  const spec = specCommand(type);
  if (spec === null) {
    return { ok: false, failure: { code: "unknown_command_type", message: `unknown command type "${type}"; valid types: ${acceptedTypes(options.allowInternal).join(", ")}` } };
  }
  if (!options.allowInternal && spec.scope === "internal") {
    return { ok: false, failure: { code: "internal_command", message: `command type "${type}" is internal to the server` } };
  }
  if (!options.allowInternal && "clientRequest" in raw) {
    return { ok: false, failure: { code: "invalid_command", message: "clientRequest is set by the server's tools, not by clients" } };
  }
  if (spec.implemented === null) {
    return { ok: false, failure: { code: "unsupported_command", message: `command type "${type}" is not supported by this server` } };
  }
  const parsed = decodeCommand(spec.implemented, raw);
  if (!parsed.success) {
    return { ok: false, failure: { code: "invalid_command", message: `invalid ${type}: ${formatZodIssues(parsed.error)}` } };
  }
  return { ok: true, command: parsed.data };
}
