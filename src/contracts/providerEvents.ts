import { z } from "zod";

/**
 * What every adapter emits, whatever its native protocol: the protocol-mapping
 * half of an adapter (STYLE rule 4) turns native messages into these. The
 * engine turns them into commands; only `item.delta` and `item.output` skip
 * the log (DESIGN invariant 14): they go to live subscribers.
 *
 * Only `turn.completed` ends a turn. A failed command, an error item or a
 * closed stream does not: an adapter that loses its process while a turn runs
 * emits `turn.completed` with status "failed" itself.
 */

export const ProviderEventType = {
  turnStarted: "turn.started",
  itemCompleted: "item.completed",
  itemDelta: "item.delta",
  itemOutput: "item.output",
  usage: "usage",
  limit: "limit",
  backgroundTask: "background_task",
  turnCompleted: "turn.completed",
} as const;
export type ProviderEventType = (typeof ProviderEventType)[keyof typeof ProviderEventType];

export const ProviderItemKind = {
  assistantMessage: "assistant_message",
  reasoning: "reasoning",
  commandExecution: "command_execution",
  fileChange: "file_change",
  todoList: "todo_list",
  userInputRequest: "user_input_request",
  approvalRequest: "approval_request",
  error: "error",
  dynamicTool: "dynamic_tool",
  systemNotice: "system_notice",
  proposedPlan: "proposed_plan",
  fileSearch: "file_search",
  webSearch: "web_search",
  compaction: "compaction",
} as const satisfies { readonly [name: string]: ProviderItem["kind"] };
export type ProviderItemKind = (typeof ProviderItemKind)[keyof typeof ProviderItemKind];

export const ApprovalRequestKind = {
  command: "command",
  fileRead: "file-read",
  fileChange: "file-change",
  mcpElicitation: "mcp-elicitation",
  permission: "permission",
} as const;
export type ApprovalRequestKind = (typeof ApprovalRequestKind)[keyof typeof ApprovalRequestKind];

export const FileChangeKind = {
  add: "add",
  update: "update",
  delete: "delete",
} as const;
export type FileChangeKind = (typeof FileChangeKind)[keyof typeof FileChangeKind];

export const TodoStatus = {
  pending: "pending",
  inProgress: "in_progress",
  completed: "completed",
} as const;
export type TodoStatus = (typeof TodoStatus)[keyof typeof TodoStatus];

export const DynamicToolStatus = {
  completed: "completed",
  failed: "failed",
} as const;
export type DynamicToolStatus = (typeof DynamicToolStatus)[keyof typeof DynamicToolStatus];

export const TurnEndStatus = {
  completed: "completed",
  failed: "failed",
  interrupted: "interrupted",
} as const;
export type TurnEndStatus = (typeof TurnEndStatus)[keyof typeof TurnEndStatus];

/**
 * The items a provider completes, one schema per kind: the provider item
 * types below are inferred from these, and the item-completed runtime
 * command (commands/runtimeCommands.ts) validates with ProviderItemSchema.
 */
export const AssistantMessageItemSchema = z.object({ kind: z.literal("assistant_message"), text: z.string() }).strict();
export type AssistantMessageItem = z.infer<typeof AssistantMessageItemSchema>;

export const ReasoningItemSchema = z.object({ kind: z.literal("reasoning"), text: z.string() }).strict();
export type ReasoningItem = z.infer<typeof ReasoningItemSchema>;

export const CommandExecutionItemSchema = z
  .object({
    kind: z.literal("command_execution"),
    command: z.string(),
    cwd: z.string(),
    /** Null when the command was killed or never reported an exit code. */
    exitCode: z.number().nullable(),
    /** The head of the output; the full output is never stored. */
    outputPreview: z.string(),
    outputTruncated: z.boolean(),
    durationMs: z.number().nullable(),
  })
  .strict();
export type CommandExecutionItem = z.infer<typeof CommandExecutionItemSchema>;

export const FileChangeSchema = z
  .object({ path: z.string(), kind: z.enum(FileChangeKind), additions: z.number(), deletions: z.number() })
  .strict();
export type FileChange = z.infer<typeof FileChangeSchema>;

export const FileChangeItemSchema = z.object({ kind: z.literal("file_change"), changes: z.array(FileChangeSchema).readonly() }).strict();
export type FileChangeItem = z.infer<typeof FileChangeItemSchema>;

export const TodoItemSchema = z.object({ text: z.string(), status: z.enum(TodoStatus) }).strict();
export type TodoItem = z.infer<typeof TodoItemSchema>;

export const TodoListItemSchema = z.object({ kind: z.literal("todo_list"), items: z.array(TodoItemSchema).readonly() }).strict();
export type TodoListItem = z.infer<typeof TodoListItemSchema>;

/** The turn waits until `respondToRequest(requestId, ...)` answers it. */
export const UserInputRequestItemSchema = z
  .object({
    kind: z.literal("user_input_request"),
    requestId: z.string(),
    questions: z.array(z.object({ id: z.string(), question: z.string() }).strict()).readonly(),
    /**
     * False for an asynchronous question (a Codex async question): the agent
     * keeps working while it waits for the answer. Absent means blocking.
     */
    blocking: z.boolean().optional(),
  })
  .strict();
export type UserInputRequestItem = z.infer<typeof UserInputRequestItemSchema>;

/** The turn waits until `respondToRequest(requestId, ...)` answers it. */
export const ApprovalRequestItemSchema = z
  .object({ kind: z.literal("approval_request"), requestId: z.string(), requestKind: z.enum(ApprovalRequestKind), title: z.string(), detail: z.string() })
  .strict();
export type ApprovalRequestItem = z.infer<typeof ApprovalRequestItemSchema>;

/** A provider-reported error inside a turn; it does not end the turn. */
export const ErrorItemSchema = z.object({ kind: z.literal("error"), message: z.string() }).strict();
export type ErrorItem = z.infer<typeof ErrorItemSchema>;

/** A tool call the provider ran (MCP tools included), with its outcome. */
export const DynamicToolItemSchema = z
  .object({ kind: z.literal("dynamic_tool"), toolName: z.string(), arguments: z.unknown(), result: z.unknown(), status: z.enum(DynamicToolStatus) })
  .strict();
export type DynamicToolItem = z.infer<typeof DynamicToolItemSchema>;

/**
 * Something the provider told about its session rather than its work (an
 * ACP agent's available commands): a `system_notice` turn item.
 */
export const SystemNoticeItemSchema = z.object({ kind: z.literal("system_notice"), level: z.enum(["info", "warning"]), text: z.string() }).strict();
export type SystemNoticeItem = z.infer<typeof SystemNoticeItemSchema>;

/** A plan the agent proposes (plan interaction mode): its text and steps. */
export const ProposedPlanItemSchema = z
  .object({
    kind: z.literal("proposed_plan"),
    title: z.string().nullable(),
    markdown: z.string(),
    steps: z.array(z.object({ text: z.string(), status: z.enum(TodoStatus) }).strict()).readonly(),
  })
  .strict();
export type ProposedPlanItem = z.infer<typeof ProposedPlanItemSchema>;

/** A search of the workspace's files and what it found. */
export const FileSearchItemSchema = z
  .object({
    kind: z.literal("file_search"),
    query: z.string(),
    matches: z.array(z.object({ path: z.string(), line: z.number().nullable(), preview: z.string().nullable() }).strict()).readonly(),
    truncated: z.boolean(),
  })
  .strict();
export type FileSearchItem = z.infer<typeof FileSearchItemSchema>;

/** A web search (or a page opened or searched) and its results. */
export const WebSearchItemSchema = z
  .object({
    kind: z.literal("web_search"),
    query: z.string(),
    action: z.enum(["search", "open_page", "find_in_page"]),
    results: z.array(z.object({ title: z.string(), url: z.string(), snippet: z.string().nullable() }).strict()).readonly(),
  })
  .strict();
export type WebSearchItem = z.infer<typeof WebSearchItemSchema>;

/** The provider compacted its own context. */
export const CompactionItemSchema = z
  .object({
    kind: z.literal("compaction"),
    trigger: z.enum(["auto", "manual"]),
    tokensBefore: z.number().nullable(),
    tokensAfter: z.number().nullable(),
    summary: z.string().nullable(),
  })
  .strict();
export type CompactionItem = z.infer<typeof CompactionItemSchema>;

/** One schema per kind (ProviderItemKind names no kind without one). */
export const ProviderItemSchema = z.discriminatedUnion("kind", [
  ProposedPlanItemSchema,
  FileSearchItemSchema,
  WebSearchItemSchema,
  CompactionItemSchema,
  SystemNoticeItemSchema,
  AssistantMessageItemSchema,
  ReasoningItemSchema,
  CommandExecutionItemSchema,
  FileChangeItemSchema,
  TodoListItemSchema,
  UserInputRequestItemSchema,
  ApprovalRequestItemSchema,
  ErrorItemSchema,
  DynamicToolItemSchema,
]);
export type ProviderItem = z.infer<typeof ProviderItemSchema>;

export interface TurnStartedEvent {
  readonly type: "turn.started";
  readonly runId: string;
  /**
   * The provider's own id for the conversation the turn runs in (a codex
   * thread, a Claude Code session), when it has one. It may change between
   * turns of one Loom session (a provider process that was restarted).
   */
  readonly nativeThreadId?: string;
  /** The provider's own id for this turn, when it has one. */
  readonly nativeTurnId?: string;
}

export interface ItemCompletedEvent {
  readonly type: "item.completed";
  readonly runId: string;
  /**
   * The provider's id for the item, stable across a replayed stream; deltas
   * of the same item carry it too. Loom derives its turn-item id from it.
   */
  readonly itemId: string;
  readonly item: ProviderItem;
}

/** Streaming text for a live subscriber. Never stored (DESIGN invariant 14). */
export interface ItemDeltaEvent {
  readonly type: "item.delta";
  readonly runId: string;
  readonly itemId: string;
  readonly text: string;
}

/**
 * A chunk of a running command's output (stdout and stderr as they arrive),
 * under the command item's provider id: the command_execution item with the
 * same itemId completes it. Never stored (DESIGN invariant 14).
 */
export interface ItemOutputEvent {
  readonly type: "item.output";
  readonly runId: string;
  readonly itemId: string;
  readonly text: string;
  /** The command line, where the provider tells it before the command ends (the first chunk's is kept). */
  readonly command?: string;
}

/**
 * Use so far in the turn: every field is cumulative for the turn, not an
 * increment, so the last usage event of a turn is its total. The optional
 * fields are there when the provider reports them.
 */
export interface UsageEvent {
  readonly type: "usage";
  readonly runId: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache. */
  readonly cachedInputTokens?: number;
  /** The provider's own cost estimate in US dollars (not a bill). */
  readonly costUsd?: number;
}

/**
 * The provider signals it cannot serve now (docs/limits.md): every driver
 * maps its own rate-limit, plan-limit, overload and sign-in signals to one
 * of these kinds.
 */
export const ProviderLimitKind = {
  /** Too many requests for now: try again after `retryAfterMs`. */
  rateLimit: "rate_limit",
  /** The account's usage or plan limit is spent until `resetAt`. */
  usageLimit: "usage_limit",
  /** The provider's servers are overloaded or failing (529, 5xx). */
  overloaded: "overloaded",
  /** The provider's sign-in expired or was refused: a person must sign in again. */
  authExpired: "auth_expired",
} as const;
export type ProviderLimitKind = (typeof ProviderLimitKind)[keyof typeof ProviderLimitKind];

/** A limit signal from the provider; it does not end the turn. */
export interface ProviderLimitEvent {
  readonly type: "limit";
  readonly runId: string;
  readonly kind: ProviderLimitKind;
  /** How long the provider asks to wait before the next request, when it says. */
  readonly retryAfterMs: number | null;
  /** When a usage or plan limit resets (ISO 8601), when the provider says. */
  readonly resetAt: string | null;
  /** True when the provider retries by itself (codex's willRetry, Claude Code's api_retry). */
  readonly providerRetrying: boolean;
  /** The provider's own words. */
  readonly message: string;
}

export const BackgroundTaskKind = { subagent: "subagent", backgroundTask: "background_task", command: "command", monitor: "monitor" } as const;
export type BackgroundTaskKind = (typeof BackgroundTaskKind)[keyof typeof BackgroundTaskKind];

/**
 * Work the turn left running in the background (a background shell, a
 * subagent) started or ended. It may come after the turn's turn.completed:
 * a run whose turn ended with awaited work still running settles when the
 * work ends (docs/runs.md, "Background work"). `taskId` is the driver's own
 * id; a driver that can stop one is told it (cancelBackgroundTasks).
 */
export interface BackgroundTaskEvent {
  readonly type: "background_task";
  readonly runId: string;
  readonly taskId: string;
  readonly kind: BackgroundTaskKind;
  /** The turn's result waits for it (a command or monitor holds its run only when awaited). */
  readonly awaited: boolean;
  readonly status: "started" | "ended";
  readonly title?: string;
}

/** The one event that ends a turn. `error` is set exactly when status is "failed". */
export interface TurnCompletedEvent {
  readonly type: "turn.completed";
  readonly runId: string;
  readonly status: TurnEndStatus;
  readonly error: string | null;
}

export type NormalizedProviderEvent =
  | TurnStartedEvent
  | ItemCompletedEvent
  | ItemDeltaEvent
  | ItemOutputEvent
  | UsageEvent
  | ProviderLimitEvent
  | BackgroundTaskEvent
  | TurnCompletedEvent;

/** True for the events the engine records; false for streaming-only ones. */
export function isDurableProviderEvent(event: NormalizedProviderEvent): boolean {
  switch (event.type) {
    case "turn.started":
    case "item.completed":
    case "usage":
    case "limit":
    case "background_task":
    case "turn.completed":
      return true;
    case "item.delta":
    case "item.output":
      return false;
    default: {
      const unexpected: never = event;
      throw new Error(`unexpected provider event: ${JSON.stringify(unexpected)}`);
    }
  }
}
