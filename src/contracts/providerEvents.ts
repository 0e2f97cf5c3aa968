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
} as const;
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

export interface AssistantMessageItem {
  readonly kind: "assistant_message";
  readonly text: string;
}

export interface ReasoningItem {
  readonly kind: "reasoning";
  readonly text: string;
}

export interface CommandExecutionItem {
  readonly kind: "command_execution";
  readonly command: string;
  readonly cwd: string;
  /** Null when the command was killed or never reported an exit code. */
  readonly exitCode: number | null;
  /** The head of the output; the full output is never stored. */
  readonly outputPreview: string;
  readonly outputTruncated: boolean;
  readonly durationMs: number | null;
}

export interface FileChange {
  readonly path: string;
  readonly kind: FileChangeKind;
  readonly additions: number;
  readonly deletions: number;
}

export interface FileChangeItem {
  readonly kind: "file_change";
  readonly changes: readonly FileChange[];
}

export interface TodoItem {
  readonly text: string;
  readonly status: TodoStatus;
}

export interface TodoListItem {
  readonly kind: "todo_list";
  readonly items: readonly TodoItem[];
}

/** The turn waits until `respondToRequest(requestId, ...)` answers it. */
export interface UserInputRequestItem {
  readonly kind: "user_input_request";
  readonly requestId: string;
  readonly questions: readonly { readonly id: string; readonly question: string }[];
  /**
   * False for an asynchronous question (a Codex async question): the agent
   * keeps working while it waits for the answer. Absent means blocking.
   */
  readonly blocking?: boolean;
}

/** The turn waits until `respondToRequest(requestId, ...)` answers it. */
export interface ApprovalRequestItem {
  readonly kind: "approval_request";
  readonly requestId: string;
  readonly requestKind: ApprovalRequestKind;
  readonly title: string;
  readonly detail: string;
}

/** A provider-reported error inside a turn; it does not end the turn. */
export interface ErrorItem {
  readonly kind: "error";
  readonly message: string;
}

/** A tool call the provider ran (MCP tools included), with its outcome. */
export interface DynamicToolItem {
  readonly kind: "dynamic_tool";
  readonly toolName: string;
  readonly arguments: unknown;
  readonly result: unknown;
  readonly status: DynamicToolStatus;
}

/**
 * Something the provider told about its session rather than its work (an
 * ACP agent's available commands): a `system_notice` turn item.
 */
export interface SystemNoticeItem {
  readonly kind: "system_notice";
  readonly level: "info" | "warning";
  readonly text: string;
}

/** A plan the agent proposes (plan interaction mode): its text and steps. */
export interface ProposedPlanItem {
  readonly kind: "proposed_plan";
  readonly title: string | null;
  readonly markdown: string;
  readonly steps: readonly { readonly text: string; readonly status: TodoStatus }[];
}

/** A search of the workspace's files and what it found. */
export interface FileSearchItem {
  readonly kind: "file_search";
  readonly query: string;
  readonly matches: readonly { readonly path: string; readonly line: number | null; readonly preview: string | null }[];
  readonly truncated: boolean;
}

/** A web search (or a page opened or searched) and its results. */
export interface WebSearchItem {
  readonly kind: "web_search";
  readonly query: string;
  readonly action: "search" | "open_page" | "find_in_page";
  readonly results: readonly { readonly title: string; readonly url: string; readonly snippet: string | null }[];
}

/** The provider compacted its own context. */
export interface CompactionItem {
  readonly kind: "compaction";
  readonly trigger: "auto" | "manual";
  readonly tokensBefore: number | null;
  readonly tokensAfter: number | null;
  readonly summary: string | null;
}

export type ProviderItem =
  | ProposedPlanItem
  | FileSearchItem
  | WebSearchItem
  | CompactionItem
  | SystemNoticeItem
  | AssistantMessageItem
  | ReasoningItem
  | CommandExecutionItem
  | FileChangeItem
  | TodoListItem
  | UserInputRequestItem
  | ApprovalRequestItem
  | ErrorItem
  | DynamicToolItem;

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
  | TurnCompletedEvent;

/** True for the events the engine records; false for streaming-only ones. */
export function isDurableProviderEvent(event: NormalizedProviderEvent): boolean {
  switch (event.type) {
    case "turn.started":
    case "item.completed":
    case "usage":
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
