import { McpCapability } from "../../credentialRegistry.js";
import { type DelegationToolsContext, delegateTask } from "../../delegation/delegate.js";
import { listPendingRequests, readPendingRequest, respondToPendingRequest } from "../../delegation/pendingRequests.js";
import { taskCancel, taskStatus } from "../../delegation/tasks.js";
import { defineTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import { DelegateTaskInput, PendingRequestListInput, PendingRequestReadInput, PendingRequestRespondInput, TaskCancelInput, TaskStatusInput } from "./schemas.js";

const orchestration = McpCapability.orchestration;

/** delegate_task, task_status, task_cancel and the pending-request tools (spec 000). */
export function delegationToolkit(ctx: DelegationToolsContext): McpToolkit {
  return defineToolkit("delegation", [
    defineTool({
      name: "delegate_task",
      description:
        "Hand a task to a new child agent on any provider. The child gets only `task` (plus a role instruction), never your conversation. mode async returns at once; mode wait returns on the result, a blocking question (hasPendingQuestion), a pending approval, or the wait cap (waitTimedOut; the child keeps running). Use a distinct clientRequestId per round, stable across retries.",
      inputSchema: DelegateTaskInput,
      capability: orchestration,
      handler: (input, tool) => delegateTask(ctx, tool.scope, input, tool),
    }),
    defineTool({
      name: "task_status",
      description: "A delegated task's durable state and published result. latestTerminal* report later follow-ups without replacing the result.",
      inputSchema: TaskStatusInput,
      capability: orchestration,
      handler: (input, tool) => taskStatus(ctx, tool.scope, input),
    }),
    defineTool({
      name: "task_cancel",
      description: "Cancel a delegated task: stops the child's own tasks, then the child thread, cancels its queued turn and automatic delivery to you.",
      inputSchema: TaskCancelInput,
      capability: orchestration,
      handler: (input, tool) => taskCancel(ctx, tool.scope, input),
    }),
    defineTool({
      name: "t3_pending_request_list",
      description: "List a thread's pending requests (questions and approvals). Pass threadId = a task's childThreadId.",
      inputSchema: PendingRequestListInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input) => Promise.resolve(listPendingRequests(ctx, input)),
    }),
    defineTool({
      name: "t3_pending_request_read",
      description: "Read one pending request in full (its questions and their ids).",
      inputSchema: PendingRequestReadInput,
      capability: orchestration,
      annotations: { readOnlyHint: true },
      handler: (input) => Promise.resolve(readPendingRequest(ctx, input)),
    }),
    defineTool({
      name: "t3_pending_request_respond",
      description: "Answer or dismiss a child's question. Approvals can only be answered by the user.",
      inputSchema: PendingRequestRespondInput,
      capability: orchestration,
      handler: (input, tool) => respondToPendingRequest(ctx, tool.scope, input),
    }),
  ]);
}
