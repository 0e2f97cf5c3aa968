/**
 * Every attribute the span model writes (docs/telemetry.md lists them with
 * their meaning). `gen_ai.*` follow the OpenTelemetry GenAI semantic
 * conventions; `loom.*` are Loom's own; `error.type` is the general
 * convention's failure code.
 */
export const Attr = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  conversationId: "gen_ai.conversation.id",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cachedInputTokens: "gen_ai.usage.cache_read.input_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  errorType: "error.type",
  costUsd: "loom.usage.cost_usd",
  reasoningTokens: "loom.usage.reasoning_output_tokens",
  threadId: "loom.thread.id",
  rootThreadId: "loom.root_thread.id",
  threadTitle: "loom.thread.title",
  runId: "loom.run.id",
  runKind: "loom.run.kind",
  runOrdinal: "loom.run.ordinal",
  runStatus: "loom.run.status",
  endReason: "loom.run.end_reason",
  providerInstanceId: "loom.provider.instance_id",
  driver: "loom.provider.driver",
  attemptId: "loom.attempt.id",
  attemptOrdinal: "loom.attempt.ordinal",
  attemptStatus: "loom.attempt.status",
  providerSessionId: "loom.provider_session.id",
  itemId: "loom.item.id",
  itemType: "loom.item.type",
  toolStatus: "loom.tool.status",
  exitCode: "loom.tool.exit_code",
  taskId: "loom.task.id",
  taskStatus: "loom.task.status",
  taskMode: "loom.task.mode",
  taskDepth: "loom.task.depth",
  childThreadId: "loom.task.child_thread.id",
  workflowId: "loom.workflow.id",
  workflowName: "loom.workflow.name",
  workflowStatus: "loom.workflow.status",
  stepId: "loom.workflow.step.id",
  stepIndex: "loom.workflow.step.index",
  stepStatus: "loom.workflow.step.status",
  stepPhase: "loom.workflow.step.phase",
  requestId: "loom.request.id",
  requestKind: "loom.request.kind",
  requestStatus: "loom.request.status",
  requestOutcome: "loom.request.outcome",
  requestBlocking: "loom.request.blocking",
  waitLabel: "loom.wait.label",
  waitOutcome: "loom.wait.outcome",
  linkKind: "loom.link.kind",
} as const;
export type Attr = (typeof Attr)[keyof typeof Attr];

/** gen_ai.operation.name values the model uses. */
export const Operation = {
  invokeAgent: "invoke_agent",
  executeTool: "execute_tool",
  invokeWorkflow: "invoke_workflow",
} as const;

/**
 * gen_ai.provider.name by driver, where the GenAI conventions name the
 * provider; other drivers report their driver name.
 */
const PROVIDER_OF_DRIVER: Readonly<Record<string, string>> = {
  claude: "anthropic",
  codex: "openai",
  grok: "x_ai",
  gemini: "gcp.gemini",
};

export function providerNameOf(driver: string | null): string {
  if (driver === null) return "unknown";
  return PROVIDER_OF_DRIVER[driver] ?? driver;
}
