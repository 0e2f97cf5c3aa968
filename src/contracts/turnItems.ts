import { z } from "zod";
import { CheckpointFileSchema, CheckpointStatusSchema } from "./entities/checkpoints.js";
import { HandoffStatusSchema, HandoffStrategySchema } from "./entities/contextTransfers.js";
import { CountSchema, EntityIdSchema, NullableEntityIdSchema } from "./entities/fields.js";
import { ApprovalKindSchema, RuntimeRequestStatusSchema } from "./entities/runtimeRequests.js";
import { SubagentStatusSchema } from "./entities/subagents.js";
import { type ForwardCompatible, decodeForwardCompatible } from "./forwardCompatible.js";
import { CreatedBySchema, CreationSourceSchema, IsoTimeSchema, ThreadLineageSchema } from "./thread.js";
import {
  ApprovalDecisionSchema,
  CompactionDirectionSchema,
  CompactionTriggerSchema,
  FileChangeEntrySchema,
  FileSearchMatchSchema,
  NoticeLevelSchema,
  PlanStepSchema,
  RunInterruptOutcomeSchema,
  SecretRequestStatusSchema,
  TodoItemSchema,
  ToolItemStatusSchema,
  UserInputAnswersSchema,
  UserInputQuestionSchema,
  UserInputStatusSchema,
  WebSearchActionSchema,
  WebSearchResultSchema,
} from "./turnItemParts.js";

/**
 * The 24 turn item types (spec 004 §2.1). Turn items are the transcript a
 * thread shows, projected from the execution graph; they are never the
 * source of truth for control state.
 */
export const TURN_ITEM_TYPES = {
  notification: "notification",
  userMessage: "user_message",
  assistantMessage: "assistant_message",
  reasoning: "reasoning",
  proposedPlan: "proposed_plan",
  todoList: "todo_list",
  userInputRequest: "user_input_request",
  fileChange: "file_change",
  commandExecution: "command_execution",
  fileSearch: "file_search",
  webSearch: "web_search",
  approvalRequest: "approval_request",
  checkpoint: "checkpoint",
  runInterruptRequest: "run_interrupt_request",
  runInterruptResult: "run_interrupt_result",
  systemNotice: "system_notice",
  error: "error",
  compaction: "compaction",
  handoff: "handoff",
  fork: "fork",
  threadCreated: "thread_created",
  secretRequest: "secret_request",
  subagent: "subagent",
  dynamicTool: "dynamic_tool",
} as const;
export type TurnItemType = (typeof TURN_ITEM_TYPES)[keyof typeof TURN_ITEM_TYPES];

const turnItemTypeSet: ReadonlySet<string> = new Set(Object.values(TURN_ITEM_TYPES));
export function isTurnItemType(value: string): value is TurnItemType {
  return turnItemTypeSet.has(value);
}

/**
 * Fields every turn item has. `position` orders items within the thread's
 * timeline: unique per thread, increasing in creation order, and the cursor
 * of timeline reads. An item updated in place (a streaming message, a
 * finished command) keeps its id and position and bumps `updatedAt`.
 */
const turnItemBase = {
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  runId: NullableEntityIdSchema,
  position: z.number().int().nonnegative(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
};

function variant<T extends TurnItemType, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ ...turnItemBase, type: z.literal(type), ...shape });
}

/** `textOmitted`, `filesOmitted`, `promptOmitted`, `resultOmitted` mark bodies left out of a deduplicated wire snapshot. */
const omitted = z.literal(true).optional();

export const NotificationItemSchema = variant("notification", {
  title: z.string().nullable(),
  text: z.string(),
  /** The thread the notification is about (e.g. a child with a pending question). */
  sourceThreadId: NullableEntityIdSchema,
  /** The delegated task a notice is about, when it is one (docs/delegation.md). */
  taskId: NullableEntityIdSchema.optional(),
  /** The child's question a question notice routes. */
  requestId: NullableEntityIdSchema.optional(),
  /**
   * How the notice reaches the agent: steered into its running turn, or the
   * input of a follow-up run (`queued`); `accepted` once the recipient took it
   * in some other way (notification.delivery.accept) and its run was cancelled.
   */
  delivery: z.enum(["steered", "queued", "accepted"]).optional(),
});
export const UserMessageItemSchema = variant("user_message", {
  messageId: EntityIdSchema,
  text: z.string(),
  textOmitted: omitted,
  createdBy: CreatedBySchema,
  creationSource: CreationSourceSchema,
});
export const AssistantMessageItemSchema = variant("assistant_message", {
  messageId: EntityIdSchema,
  text: z.string(),
  textOmitted: omitted,
  /** True while the provider is still appending text. */
  streaming: z.boolean(),
  createdBy: CreatedBySchema,
  creationSource: CreationSourceSchema,
});
export const ReasoningItemSchema = variant("reasoning", {
  summary: z.string().nullable(),
  text: z.string().nullable(),
  encryptedContentPresent: z.boolean(),
});
export const ProposedPlanItemSchema = variant("proposed_plan", {
  planId: EntityIdSchema,
  title: z.string().nullable(),
  markdown: z.string(),
  steps: z.array(PlanStepSchema),
});
export const TodoListItemSchema = variant("todo_list", {
  items: z.array(TodoItemSchema),
});
export const UserInputRequestItemSchema = variant("user_input_request", {
  requestId: EntityIdSchema,
  questions: z.array(UserInputQuestionSchema),
  status: UserInputStatusSchema,
  answers: UserInputAnswersSchema.nullable(),
});
export const FileChangeItemSchema = variant("file_change", {
  changes: z.array(FileChangeEntrySchema),
  status: ToolItemStatusSchema,
});
export const CommandExecutionItemSchema = variant("command_execution", {
  command: z.string(),
  cwd: z.string().nullable(),
  status: ToolItemStatusSchema,
  exitCode: z.number().int().nullable(),
  durationMs: CountSchema.nullable(),
  /** The head of the output; the full output, when kept, is in `outputStreamId`. */
  outputPreview: z.string(),
  outputTruncated: z.boolean(),
  outputStreamId: z.string().min(1).nullable(),
});
export const FileSearchItemSchema = variant("file_search", {
  query: z.string(),
  matches: z.array(FileSearchMatchSchema),
  truncated: z.boolean(),
});
export const WebSearchItemSchema = variant("web_search", {
  query: z.string(),
  action: WebSearchActionSchema,
  results: z.array(WebSearchResultSchema),
});
export const ApprovalRequestItemSchema = variant("approval_request", {
  requestId: EntityIdSchema,
  requestKind: ApprovalKindSchema,
  title: z.string(),
  detail: z.string().nullable(),
  status: RuntimeRequestStatusSchema,
  decision: ApprovalDecisionSchema.nullable(),
});
export const CheckpointItemSchema = variant("checkpoint", {
  checkpointId: EntityIdSchema,
  scopeId: EntityIdSchema,
  appRunOrdinal: z.number().int().nonnegative(),
  status: CheckpointStatusSchema,
  files: z.array(CheckpointFileSchema),
  filesOmitted: omitted,
});
export const RunInterruptRequestItemSchema = variant("run_interrupt_request", {
  requestedBy: CreatedBySchema,
  reason: z.string().nullable(),
});
export const RunInterruptResultItemSchema = variant("run_interrupt_result", {
  outcome: RunInterruptOutcomeSchema,
  message: z.string().nullable(),
});
export const SystemNoticeItemSchema = variant("system_notice", {
  level: NoticeLevelSchema,
  text: z.string(),
});
export const ErrorItemSchema = variant("error", {
  code: z.string().nullable(),
  message: z.string(),
  detail: z.string().nullable(),
});
export const CompactionItemSchema = variant("compaction", {
  trigger: CompactionTriggerSchema,
  direction: CompactionDirectionSchema,
  tokensBefore: CountSchema.nullable(),
  tokensAfter: CountSchema.nullable(),
  summary: z.string().nullable(),
});
export const HandoffItemSchema = variant("handoff", {
  handoffId: EntityIdSchema,
  /** Provider instance ids; `fromProvider` is null when the thread had none yet. */
  fromProvider: NullableEntityIdSchema,
  toProvider: EntityIdSchema,
  strategy: HandoffStrategySchema,
  status: HandoffStatusSchema,
});
export const ForkItemSchema = variant("fork", {
  sourceThreadId: EntityIdSchema,
  targetThreadId: EntityIdSchema,
  /** The last source run the fork includes; null when forked before any run. */
  sourceRunOrdinal: z.number().int().nonnegative().nullable(),
});
export const ThreadCreatedItemSchema = variant("thread_created", {
  childThreadId: EntityIdSchema,
  relation: ThreadLineageSchema.shape.relation,
  title: z.string(),
});
export const SecretRequestItemSchema = variant("secret_request", {
  secretName: z.string().min(1),
  envVarName: z.string().min(1),
  description: z.string().nullable(),
  status: SecretRequestStatusSchema,
  /** The provider session that asked: the only one the value ever reaches. */
  providerSessionId: NullableEntityIdSchema.optional(),
});
export const SubagentItemSchema = variant("subagent", {
  subagentId: EntityIdSchema,
  childThreadId: NullableEntityIdSchema,
  agentLabel: z.string().nullable(),
  prompt: z.string(),
  promptOmitted: omitted,
  result: z.string().nullable(),
  resultOmitted: omitted,
  status: SubagentStatusSchema,
});
export const DynamicToolItemSchema = variant("dynamic_tool", {
  toolName: z.string().min(1),
  arguments: z.unknown(),
  result: z.unknown(),
  status: ToolItemStatusSchema,
});

const turnItemSchemas = [
  NotificationItemSchema,
  UserMessageItemSchema,
  AssistantMessageItemSchema,
  ReasoningItemSchema,
  ProposedPlanItemSchema,
  TodoListItemSchema,
  UserInputRequestItemSchema,
  FileChangeItemSchema,
  CommandExecutionItemSchema,
  FileSearchItemSchema,
  WebSearchItemSchema,
  ApprovalRequestItemSchema,
  CheckpointItemSchema,
  RunInterruptRequestItemSchema,
  RunInterruptResultItemSchema,
  SystemNoticeItemSchema,
  ErrorItemSchema,
  CompactionItemSchema,
  HandoffItemSchema,
  ForkItemSchema,
  ThreadCreatedItemSchema,
  SecretRequestItemSchema,
  SubagentItemSchema,
  DynamicToolItemSchema,
] as const;

/** Every known variant, strictly: use decodeTurnItem where unknown types must survive. */
export const TurnItemSchema = z.discriminatedUnion("type", turnItemSchemas);
export type TurnItem = z.infer<typeof TurnItemSchema>;
export type TurnItemOf<T extends TurnItemType> = Extract<TurnItem, { type: T }>;

const turnItemSchemaByType: ReadonlyMap<string, z.ZodType<TurnItem>> = new Map(
  turnItemSchemas.map((schema) => [schema.shape.type.value, schema as z.ZodType<TurnItem>]),
);

/**
 * Decode a turn item from outside (a stored row, a peer, a newer server). A
 * known type must match its schema or this throws DecodeError; an unknown
 * type becomes `{ tag: "unknown", rawTag, raw }` and is kept, never rendered
 * as a known item.
 */
export function decodeTurnItem(raw: unknown): ForwardCompatible<TurnItem> {
  return decodeForwardCompatible("type", turnItemSchemaByType, raw);
}
