import { callerOfCall, callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import type { App } from "../../../app/app.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";

const orchestration = McpCapability.orchestration;

/** delegate_task, task_status, task_cancel and the pending-request tools (spec 000). */
export function delegationToolkit(app: App): McpToolkit {
  return defineToolkit("delegation", [
    contractTool("delegate_task", {
      description:
        "Hand a task to a new child agent on any provider. The child gets only `task` (plus a role instruction), never your conversation. mode async returns at once; mode wait returns on the result, a blocking question (hasPendingQuestion), a pending approval, or the wait cap (waitTimedOut; the child keeps running). Use a distinct clientRequestId per round, stable across retries.",
      capability: orchestration,
      handler: (input, tool) => app.delegateTask(callerOfCall(tool), input, tool),
    }),
    contractTool("task_status", {
      description: "A delegated task's durable state and published result. latestTerminal* report later follow-ups without replacing the result.",
      capability: orchestration,
      handler: (input, tool) => app.taskStatus(callerOfScope(tool.scope), input),
    }),
    contractTool("task_cancel", {
      description: "Cancel a delegated task: stops the child's own tasks, then the child thread, cancels its queued turn and automatic delivery to you.",
      capability: orchestration,
      handler: (input, tool) => app.taskCancel(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_budget_raise", {
      description:
        "Raise a budget below you (one of taskId, threadId, workflowId) within the budgets you run under: higher values for limits it has. A tree paused on it goes on where it stopped.",
      capability: orchestration,
      handler: (input, tool) => app.raiseBudget(callerOfScope(tool.scope), input),
    }),
    contractTool("t3_pending_request_list", {
      description: "List a thread's pending requests (questions and approvals). Pass threadId = a task's childThreadId.",
      capability: orchestration,
      handler: (input) => Promise.resolve(app.listPendingRequests(input)),
    }),
    contractTool("t3_pending_request_read", {
      description: "Read one pending request in full (its questions and their ids).",
      capability: orchestration,
      handler: (input) => Promise.resolve(app.readPendingRequest(input)),
    }),
    contractTool("t3_pending_request_respond", {
      description: "Answer or dismiss a child's question. An approval is the user's to decide, unless you delegated the child with approvalRouting parent: then decide it (decision) within your own runtime mode, or leave it to the user.",
      capability: orchestration,
      handler: (input, tool) => app.respondToPendingRequest(callerOfScope(tool.scope), input),
    }),
  ]);
}
