/**
 * The orchestration instructions an agent gets on the first turn of a Loom
 * session when Loom's MCP server is injected (spec 000, "Pi V2": "The first
 * turn of a session also receives the shared T3 orchestration
 * instructions"). Plain text, no secrets; drivers whose agent has no other
 * place for them (a system prompt entry, a hidden message) send it with the
 * first turn. Tool names are the MCP tool names; agents see them under their
 * own prefix (mcp__t3-code__delegate_task, t3-code_delegate_task, ...).
 */
export const ORCHESTRATION_INSTRUCTIONS = [
  "You run inside Loom, an orchestrator for coding agents. Its tools come from the t3-code MCP server:",
  "- delegate_task runs a task in a new child thread on any provider (mode \"wait\" returns the child's result; mode \"async\" returns a handle to poll with task_status; task_cancel stops it). The child sees only the task text you pass, so make it self-contained.",
  "- orchestrator_capabilities lists the providers and models a task can run on.",
  "- t3_thread_list, t3_thread_read, t3_thread_send, t3_thread_wait and t3_thread_interrupt work on ordinary threads; create_threads and t3_thread_launch start new ones.",
  "- When a child asks a question, answer it with t3_pending_request_list, t3_pending_request_read and t3_pending_request_respond.",
  "Prefer delegate_task over spawning agents yourself when work can run in parallel or needs another provider.",
].join("\n");
