import type { ToolName } from "../contracts/tools/toolContracts.js";

/**
 * What each operation does to state: a read, or a write (creates or changes
 * threads, runs, tasks or requests). An agent may read between its runs but
 * write only during a live run on its own thread (spec 000, Policy And
 * Idempotency); `resolveCaller` enforces it. The MCP listing derives each
 * tool's readOnlyHint from this table.
 */
export const OperationAccess = {
  read: "read",
  write: "write",
} as const;
export type OperationAccess = (typeof OperationAccess)[keyof typeof OperationAccess];

const { read, write } = OperationAccess;

export const TOOL_ACCESS: { readonly [N in ToolName]: OperationAccess } = {
  orchestrator_capabilities: read,
  create_threads: write,
  t3_thread_launch: write,
  t3_thread_list: read,
  t3_thread_read: read,
  t3_thread_update: write,
  link_pull_request: write,
  unlink_pull_request: write,
  t3_thread_send: write,
  t3_thread_wait: read,
  t3_thread_interrupt: write,
  delegate_task: write,
  // Reading a published result acknowledges its delivery; that is bookkeeping of the read, not a change on the caller's behalf.
  task_status: read,
  task_cancel: write,
  t3_pending_request_list: read,
  t3_pending_request_read: read,
  t3_pending_request_respond: write,
  t3_queue_list: read,
  t3_queue_read: read,
  t3_queue_edit: write,
  t3_queue_cancel: write,
  t3_queue_reorder: write,
  t3_queue_promote_to_steer: write,
  t3_thread_organize: write,
  t3_thread_configuration: read,
  t3_thread_configure: write,
  t3_thread_fork: write,
  t3_thread_merge_back: write,
  t3_thread_transfers: read,
  // Lists, and cancels for the owner: a write, so an agent lists only from a live run.
  t3_merge_queue: write,
  t3_thread_search: read,
  // Like task_status: reading a result acknowledges its delivery.
  t3_background_wait: read,
  request_secret: write,
  schedule_task: write,
  list_scheduled_tasks: read,
  update_scheduled_task: write,
  delete_scheduled_task: write,
  run_scheduled_task_now: write,
  t3_workflow_start: write,
  t3_workflow_status: read,
  t3_workflow_stop: write,
  t3_budget_raise: write,
  // Finding tools reads nothing; a call through it is checked by the called tool's own entry here, as if called
  // directly. It may write all the same, so its listing drops readOnlyHint (src/mcp/toolkits/discovery/tools.ts).
  loom_tools: read,
  loom_echo: read,
};
