import { z } from "zod";
import {
  DelegateTaskInput,
  DelegateTaskOutput,
  PendingRequestListInput,
  PendingRequestListOutput,
  PendingRequestReadInput,
  PendingRequestReadOutput,
  PendingRequestRespondInput,
  PendingRequestRespondOutput,
  TaskCancelInput,
  TaskCancelOutput,
  TaskStatusInput,
  TaskStatusOutput,
} from "./delegationTools.js";
import {
  CapabilitiesInput,
  CapabilitiesOutput,
  CreateThreadsInput,
  CreateThreadsOutput,
  LinkPullRequestInput,
  ThreadInterruptInput,
  ThreadInterruptOutput,
  ThreadLaunchInput,
  ThreadLaunchOutput,
  ThreadListInput,
  ThreadListOutput,
  ThreadMetadataOutput,
  ThreadReadInput,
  ThreadReadOutput,
  ThreadSendInput,
  ThreadSendOutput,
  ThreadUpdateInput,
  ThreadWaitInput,
  ThreadWaitOutput,
  UnlinkPullRequestInput,
} from "./threadTools.js";
import { MergeQueueInput, MergeQueueOutput } from "./mergeQueueTools.js";
import { ThreadConfigurationInput, ThreadConfigurationOutput, ThreadConfigureInput, ThreadConfigureOutput } from "./configurationTools.js";
import {
  ThreadForkInput,
  ThreadForkOutput,
  ThreadMergeBackInput,
  ThreadMergeBackOutput,
  ThreadTransfersInput,
  ThreadTransfersOutput,
} from "./lineageTools.js";
import { ThreadOrganizeInput, ThreadOrganizeOutput } from "./organizeTools.js";
import {
  QueueCancelInput,
  QueueChangeOutput,
  QueueEditInput,
  QueueListInput,
  QueueListOutput,
  QueuePromoteInput,
  QueueReadInput,
  QueueReadOutput,
  QueueReorderInput,
} from "./queueTools.js";

import { BackgroundWaitInput, BackgroundWaitOutput } from "./backgroundTools.js";
import { ThreadSearchInput, ThreadSearchOutput } from "./searchTools.js";
import { RequestSecretInput, RequestSecretOutput } from "./secretTools.js";
import {
  DeleteScheduledTaskOutput,
  ListScheduledTasksInput,
  ListScheduledTasksOutput,
  RunScheduledTaskNowOutput,
  ScheduleTaskInput,
  ScheduledTaskIdOnlyInput,
  ScheduledTaskOutput,
  UpdateScheduledTaskInput,
} from "./scheduleTools.js";
import { WorkflowOutput, WorkflowStartInput, WorkflowStartOutput, WorkflowStatusInput, WorkflowStopInput } from "./workflowTools.js";
import { BudgetRaiseInput, BudgetRaiseOutput } from "./budgetTools.js";
import { LoomToolsInput, LoomToolsOutput } from "./discoveryTools.js";

/** The structuredContent of a success: an object, or a union of objects (a dry run's answer beside the real one). */
export type OutputShape = z.ZodObject | z.ZodUnion<readonly z.ZodObject[]>;

/** A tool's contract: what it takes and the structuredContent it answers with on success. */
export interface ToolContract<I extends z.ZodType = z.ZodType, O extends OutputShape = OutputShape> {
  readonly input: I;
  readonly output: O;
}

function contract<I extends z.ZodType, O extends OutputShape>(input: I, output: O): ToolContract<I, O> {
  return { input, output };
}

export const LoomEchoInput = z.object({ text: z.string().max(100_000).describe("Text to return") }).strict();
export const LoomEchoOutput = z.object({ text: z.string() });

/**
 * Every tool Loom serves, by name: the one table the MCP toolkits, the CLI
 * and the typed client read their input and output shapes from.
 */
export const TOOL_CONTRACTS = {
  orchestrator_capabilities: contract(CapabilitiesInput, CapabilitiesOutput),
  create_threads: contract(CreateThreadsInput, CreateThreadsOutput),
  t3_thread_launch: contract(ThreadLaunchInput, ThreadLaunchOutput),
  t3_thread_list: contract(ThreadListInput, ThreadListOutput),
  t3_thread_read: contract(ThreadReadInput, ThreadReadOutput),
  t3_thread_update: contract(ThreadUpdateInput, ThreadMetadataOutput),
  link_pull_request: contract(LinkPullRequestInput, ThreadMetadataOutput),
  unlink_pull_request: contract(UnlinkPullRequestInput, ThreadMetadataOutput),
  t3_thread_send: contract(ThreadSendInput, ThreadSendOutput),
  t3_thread_wait: contract(ThreadWaitInput, ThreadWaitOutput),
  t3_thread_interrupt: contract(ThreadInterruptInput, ThreadInterruptOutput),
  delegate_task: contract(DelegateTaskInput, DelegateTaskOutput),
  task_status: contract(TaskStatusInput, TaskStatusOutput),
  task_cancel: contract(TaskCancelInput, TaskCancelOutput),
  t3_pending_request_list: contract(PendingRequestListInput, PendingRequestListOutput),
  t3_pending_request_read: contract(PendingRequestReadInput, PendingRequestReadOutput),
  t3_pending_request_respond: contract(PendingRequestRespondInput, PendingRequestRespondOutput),
  t3_queue_list: contract(QueueListInput, QueueListOutput),
  t3_queue_read: contract(QueueReadInput, QueueReadOutput),
  t3_queue_edit: contract(QueueEditInput, QueueChangeOutput),
  t3_queue_cancel: contract(QueueCancelInput, QueueChangeOutput),
  t3_queue_reorder: contract(QueueReorderInput, QueueChangeOutput),
  t3_queue_promote_to_steer: contract(QueuePromoteInput, QueueChangeOutput),
  t3_thread_organize: contract(ThreadOrganizeInput, ThreadOrganizeOutput),
  t3_thread_configuration: contract(ThreadConfigurationInput, ThreadConfigurationOutput),
  t3_thread_configure: contract(ThreadConfigureInput, ThreadConfigureOutput),
  t3_thread_fork: contract(ThreadForkInput, ThreadForkOutput),
  t3_thread_merge_back: contract(ThreadMergeBackInput, ThreadMergeBackOutput),
  t3_thread_transfers: contract(ThreadTransfersInput, ThreadTransfersOutput),
  t3_merge_queue: contract(MergeQueueInput, MergeQueueOutput),
  loom_echo: contract(LoomEchoInput, LoomEchoOutput),
  t3_thread_search: contract(ThreadSearchInput, ThreadSearchOutput),
  t3_background_wait: contract(BackgroundWaitInput, BackgroundWaitOutput),
  request_secret: contract(RequestSecretInput, RequestSecretOutput),
  schedule_task: contract(ScheduleTaskInput, ScheduledTaskOutput),
  list_scheduled_tasks: contract(ListScheduledTasksInput, ListScheduledTasksOutput),
  update_scheduled_task: contract(UpdateScheduledTaskInput, ScheduledTaskOutput),
  delete_scheduled_task: contract(ScheduledTaskIdOnlyInput, DeleteScheduledTaskOutput),
  run_scheduled_task_now: contract(ScheduledTaskIdOnlyInput, RunScheduledTaskNowOutput),
  t3_workflow_start: contract(WorkflowStartInput, WorkflowStartOutput),
  t3_workflow_status: contract(WorkflowStatusInput, WorkflowOutput),
  t3_workflow_stop: contract(WorkflowStopInput, WorkflowOutput),
  t3_budget_raise: contract(BudgetRaiseInput, BudgetRaiseOutput),
  loom_tools: contract(LoomToolsInput, LoomToolsOutput),
} as const;

export type ToolName = keyof typeof TOOL_CONTRACTS;
export type ToolInput<N extends ToolName> = z.input<(typeof TOOL_CONTRACTS)[N]["input"]>;
export type ToolOutput<N extends ToolName> = z.output<(typeof TOOL_CONTRACTS)[N]["output"]>;
