import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { DelegatedTaskRoleSchema, DelegationModeSchema, TaskFallbackSchema, WakePolicySchema } from "../entities/delegatedTasks.js";
import { BudgetLimitsSchema } from "../entities/budgets.js";
import { WorkflowStepRefSchema } from "../entities/workflows.js";
import { OnCrashPolicySchema } from "../entities/runs.js";
import { ToolTaskSchema } from "../entities/toolTasks.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";

/**
 * delegated_task.request: the whole of delegate_task as one command (spec 000,
 * Delegated Task Lifecycle). Ids are chosen by the caller so a retry with the
 * same clientRequestId lands on the same task, child thread and run.
 */
export const DelegatedTaskRequestCommandSchema = command(
  "delegated_task.request",
  z
    .object({
      taskId: IdSchema,
      parentThreadId: IdSchema,
      parentRunId: IdSchema,
      childThreadId: IdSchema,
      childRunId: IdSchema,
      childMessageId: IdSchema,
      /** The brief as the parent wrote it. */
      task: z.string().min(1).max(200_000),
      /** What the child receives: the brief plus the optional role instruction, nothing else. */
      prompt: z.string().min(1).max(210_000),
      title: z.string().min(1).max(500),
      role: DelegatedTaskRoleSchema.nullable(),
      mode: DelegationModeSchema,
      providerInstanceId: IdSchema,
      model: z.string().min(1).nullable(),
      runtimeMode: RuntimeModeSchema,
      interactionMode: InteractionModeSchema,
      clientRequestId: z.string().min(1).max(200).nullable(),
      wakePolicy: WakePolicySchema.optional(),
      /**
       * `fork`: the child starts from the parent's context (its transcript as a
       * fork context transfer) instead of the bare prompt. Default `subagent`.
       */
      relation: z.enum(["subagent", "fork"]).optional(),
      /** shared (default): the child works in the parent's checkout; worktree: a worktree of its own from the parent's current state. */
      isolation: z.enum(["shared", "worktree"]).optional(),
      /** worktree: a path in the repository of the parent's workspace. */
      workspaceRepoPath: z.string().min(1).optional(),
      /** A JSON Schema the final answer must match (structured results); the prompt already carries the instruction. */
      outputSchema: z.record(z.string(), z.unknown()).optional(),
      /** The budget asked for the child's subtree; narrowed by the inherited one and, for a workflow's agent(), by what is left of its pool (docs/budgets.md). */
      budget: BudgetLimitsSchema.optional(),
      /** parent: the child's approval requests are routed to the parent as notices (docs/delegation.md, Approvals). Default owner. */
      approvalRouting: z.enum(["owner", "parent"]).optional(),
      /** An agent() call of a workflow script: the step the child's work belongs to (docs/workflows.md). */
      workflowStep: WorkflowStepRefSchema.optional(),
      /** What a restart or a lost node does to the child's runs; default resume. */
      onCrash: OnCrashPolicySchema.optional(),
      /** The child starts on a fallback or failover instance: the one asked for or inherited (or `any <driver> instance` for a driver-only target) and why it was passed over, shown in the child's timeline. */
      /** target.fallbacks as asked: where the work may move when a usage limit stops it. */
      fallbacks: z.array(TaskFallbackSchema).max(8).optional(),
      startedOnFallback: z.object({ fromProviderInstanceId: IdSchema, reason: z.string().min(1).max(2_000) }).strict().optional(),
      /** delegate_task served as an MCP task (docs/mcp.md, "Tasks"): the task's handle is recorded in this decision, with these bounds. */
      toolTask: ToolTaskSchema.pick({ ttlMs: true, pollIntervalMs: true }).strict().optional(),
      /** A merge queue's resolver (merge-queue.resolve): the entry it resolves, and the merge in progress its worktree starts at instead of a checkpoint of the parent. */
      mergeResolution: z.object({ entryId: IdSchema, baseCommit: z.string().min(1) }).strict().optional(),
    })
    .strict(),
);
export const DelegatedTaskWakePolicyCommandSchema = command(
  "delegated_task.wake-policy",
  z.object({ taskId: IdSchema, wakePolicy: WakePolicySchema }).strict(),
);
export const CompletionDeliveryAcknowledgeCommandSchema = command(
  "delegated_task.completion-delivery.acknowledge",
  z.object({ taskId: IdSchema }).strict(),
);
export const CompletionDeliveryDisposeCommandSchema = command(
  "delegated_task.completion-delivery.dispose",
  z.object({ taskId: IdSchema }).strict(),
);
/** subagent.stop: task_cancel. Stops the task's descendants, then its child thread. */
export const SubagentStopCommandSchema = command(
  "subagent.stop",
  z.object({ taskId: IdSchema, reason: z.string().max(2_000).optional() }).strict(),
);

export type DelegatedTaskRequestCommand = z.infer<typeof DelegatedTaskRequestCommandSchema>;
export type DelegatedTaskWakePolicyCommand = z.infer<typeof DelegatedTaskWakePolicyCommandSchema>;
export type CompletionDeliveryAcknowledgeCommand = z.infer<typeof CompletionDeliveryAcknowledgeCommandSchema>;
export type CompletionDeliveryDisposeCommand = z.infer<typeof CompletionDeliveryDisposeCommandSchema>;
export type SubagentStopCommand = z.infer<typeof SubagentStopCommandSchema>;
