/**
 * The normalized provider events live in contracts/ so the pure decider can
 * ingest them; drivers import them from here.
 */
export {
  ProviderEventType,
  ProviderItemKind,
  ApprovalRequestKind,
  FileChangeKind,
  TodoStatus,
  DynamicToolStatus,
  TurnEndStatus,
  isDurableProviderEvent,
  type AssistantMessageItem,
  type ReasoningItem,
  type CommandExecutionItem,
  type FileChange,
  type FileChangeItem,
  type TodoItem,
  type TodoListItem,
  type UserInputRequestItem,
  type ApprovalRequestItem,
  type ErrorItem,
  type DynamicToolItem,
  type SystemNoticeItem,
  type ProviderItem,
  type TurnStartedEvent,
  type ItemCompletedEvent,
  type ItemDeltaEvent,
  type ItemOutputEvent,
  type UsageEvent,
  type TurnCompletedEvent,
  type NormalizedProviderEvent,
} from "../contracts/providerEvents.js";
