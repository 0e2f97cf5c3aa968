import type { ToolName } from "../../contracts/tools/toolContracts.js";

/**
 * Whether a tool may be called as a durable task (MCP 2025-11-25 tasks,
 * `execution.taskSupport`): "optional" when its work is a durable record Loom
 * can answer tasks/get, tasks/result, tasks/list and tasks/cancel for from the
 * event log and projections, on any node and after a restart; "forbidden"
 * otherwise. The MCP listing shows this table; a task-augmented call of a
 * forbidden tool is refused (-32601) before anything runs. The waits
 * (t3_thread_wait, t3_background_wait, and t3_thread_send, whose task waits
 * for the run it delivered into) are recorded as a durable handle of their
 * own (src/core/toolTasks).
 */
export const TaskSupport = {
  optional: "optional",
  forbidden: "forbidden",
} as const;
export type TaskSupport = (typeof TaskSupport)[keyof typeof TaskSupport];

const { optional, forbidden } = TaskSupport;

export const TOOL_TASK_SUPPORT = {
  orchestrator_capabilities: forbidden,
  create_threads: forbidden,
  t3_thread_launch: forbidden,
  t3_thread_list: forbidden,
  t3_thread_read: forbidden,
  t3_thread_update: forbidden,
  link_pull_request: forbidden,
  unlink_pull_request: forbidden,
  t3_thread_send: optional,
  t3_thread_wait: optional,
  t3_thread_interrupt: forbidden,
  delegate_task: optional,
  task_status: forbidden,
  task_cancel: forbidden,
  t3_pending_request_list: forbidden,
  t3_pending_request_read: forbidden,
  t3_pending_request_respond: forbidden,
  t3_queue_list: forbidden,
  t3_queue_read: forbidden,
  t3_queue_edit: forbidden,
  t3_queue_cancel: forbidden,
  t3_queue_reorder: forbidden,
  t3_queue_promote_to_steer: forbidden,
  t3_thread_organize: forbidden,
  t3_thread_configuration: forbidden,
  t3_thread_configure: forbidden,
  t3_thread_fork: forbidden,
  t3_thread_merge_back: forbidden,
  t3_thread_transfers: forbidden,
  t3_merge_queue: forbidden,
  t3_thread_search: forbidden,
  t3_background_wait: optional,
  request_secret: forbidden,
  schedule_task: forbidden,
  list_scheduled_tasks: forbidden,
  update_scheduled_task: forbidden,
  delete_scheduled_task: forbidden,
  run_scheduled_task_now: forbidden,
  t3_workflow_start: optional,
  t3_workflow_status: forbidden,
  t3_workflow_stop: forbidden,
  t3_budget_raise: forbidden,
  loom_tools: forbidden,
  loom_echo: forbidden,
} as const satisfies { readonly [N in ToolName]: TaskSupport };

/** The tools whose task-augmented call Loom serves: the MCP layer says how each one starts its durable record. */
export type TaskTool = { [N in ToolName]: (typeof TOOL_TASK_SUPPORT)[N] extends "optional" ? N : never }[ToolName];
