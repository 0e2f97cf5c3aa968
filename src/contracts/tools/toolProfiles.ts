import { ToolProfile } from "./discoveryTools.js";
import type { ToolName } from "./toolContracts.js";

const { core, full } = ToolProfile;

/**
 * The narrowest profile whose tools/list shows each tool: a core tool is
 * listed to every credential, a full one only to full-profile credentials
 * (and reached by core ones through loom_tools). The core set is what an
 * agent needs to delegate, wait, read, send and answer requests.
 */
export const TOOL_LISTED_FROM: { readonly [N in ToolName]: ToolProfile } = {
  delegate_task: core,
  task_status: core,
  task_cancel: core,
  t3_thread_wait: core,
  t3_thread_read: core,
  t3_thread_send: core,
  t3_pending_request_list: core,
  t3_pending_request_respond: core,
  t3_background_wait: core,
  loom_tools: core,
  orchestrator_capabilities: full,
  create_threads: full,
  t3_thread_launch: full,
  t3_thread_list: full,
  t3_thread_update: full,
  link_pull_request: full,
  unlink_pull_request: full,
  t3_thread_interrupt: full,
  t3_pending_request_read: full,
  t3_queue_list: full,
  t3_queue_read: full,
  t3_queue_edit: full,
  t3_queue_cancel: full,
  t3_queue_reorder: full,
  t3_queue_promote_to_steer: full,
  t3_thread_organize: full,
  t3_thread_configuration: full,
  t3_thread_configure: full,
  t3_thread_fork: full,
  t3_thread_merge_back: full,
  t3_thread_transfers: full,
  t3_merge_queue: full,
  t3_thread_search: full,
  request_secret: full,
  schedule_task: full,
  list_scheduled_tasks: full,
  update_scheduled_task: full,
  delete_scheduled_task: full,
  run_scheduled_task_now: full,
  t3_workflow_start: full,
  t3_workflow_status: full,
  t3_workflow_stop: full,
  t3_budget_raise: full,
  loom_echo: full,
};

/** True when a credential of `profile` sees the tool in tools/list; a tool outside the contract table (a test's) is listed only in full. */
export function listedIn(profile: ToolProfile, tool: string): boolean {
  return profile === full || (Object.hasOwn(TOOL_LISTED_FROM, tool) && TOOL_LISTED_FROM[tool as ToolName] === core);
}
