import { z } from "zod";
import { CountSchema } from "./entities/fields.js";
import { FileChangeKindSchema } from "./entities/checkpoints.js";

/**
 * Closed sets and nested shapes used by the turn item variants in
 * turnItems.ts. Entity-owned sets (checkpoint, subagent, handoff, runtime
 * request) live with their entity and are imported from there.
 */

/** Progress of a tool-like item: file_change, command_execution, dynamic_tool. */
export const ToolItemStatus = {
  inProgress: "in_progress",
  completed: "completed",
  failed: "failed",
  declined: "declined",
} as const;
export type ToolItemStatus = (typeof ToolItemStatus)[keyof typeof ToolItemStatus];
export const ToolItemStatusSchema = z.enum(ToolItemStatus);

export const TodoStatus = {
  pending: "pending",
  inProgress: "in_progress",
  completed: "completed",
} as const;
export type TodoStatus = (typeof TodoStatus)[keyof typeof TodoStatus];
export const TodoItemSchema = z.object({
  id: z.string().min(1),
  content: z.string(),
  status: z.enum(TodoStatus),
});
export type TodoItem = z.infer<typeof TodoItemSchema>;

export const PlanStepSchema = z.object({
  text: z.string(),
  status: z.enum(TodoStatus),
});
export type PlanStep = z.infer<typeof PlanStepSchema>;

/** A pending question is answered, dismissed by the user, or expires with its run. */
export const UserInputStatus = {
  pending: "pending",
  answered: "answered",
  dismissed: "dismissed",
  expired: "expired",
} as const;
export type UserInputStatus = (typeof UserInputStatus)[keyof typeof UserInputStatus];
export const UserInputStatusSchema = z.enum(UserInputStatus);

export const UserInputQuestionSchema = z.object({
  id: z.string().min(1),
  header: z.string().nullable(),
  question: z.string(),
  options: z.array(z.object({ label: z.string(), description: z.string().nullable() })),
  multiSelect: z.boolean(),
});
export type UserInputQuestion = z.infer<typeof UserInputQuestionSchema>;

/** Answers keyed by question id; each answer lists the chosen labels or free text. */
export const UserInputAnswersSchema = z.record(z.string(), z.array(z.string()));
export type UserInputAnswers = z.infer<typeof UserInputAnswersSchema>;

export const FileChangeEntrySchema = z.object({
  path: z.string().min(1),
  kind: FileChangeKindSchema,
  /** Unified diff, or null when too large or binary. */
  diff: z.string().nullable(),
  additions: CountSchema,
  deletions: CountSchema,
});
export type FileChangeEntry = z.infer<typeof FileChangeEntrySchema>;

export const FileSearchMatchSchema = z.object({
  path: z.string().min(1),
  line: z.number().int().positive().nullable(),
  preview: z.string().nullable(),
});
export type FileSearchMatch = z.infer<typeof FileSearchMatchSchema>;

export const WebSearchAction = {
  search: "search",
  openPage: "open_page",
  findInPage: "find_in_page",
} as const;
export type WebSearchAction = (typeof WebSearchAction)[keyof typeof WebSearchAction];
export const WebSearchActionSchema = z.enum(WebSearchAction);

export const WebSearchResultSchema = z.object({
  title: z.string(),
  url: z.string().min(1),
  snippet: z.string().nullable(),
});
export type WebSearchResult = z.infer<typeof WebSearchResultSchema>;

/** The answer to an approval; null on the item while it is pending. */
export const ApprovalDecision = {
  accept: "accept",
  acceptForSession: "accept_for_session",
  decline: "decline",
  cancel: "cancel",
} as const;
export type ApprovalDecision = (typeof ApprovalDecision)[keyof typeof ApprovalDecision];
export const ApprovalDecisionSchema = z.enum(ApprovalDecision);

export const CompactionTrigger = {
  auto: "auto",
  manual: "manual",
} as const;
export type CompactionTrigger = (typeof CompactionTrigger)[keyof typeof CompactionTrigger];
export const CompactionTriggerSchema = z.enum(CompactionTrigger);

/**
 * Who compacted the context: the provider its own (`provider_native`), or
 * Loom, by summarizing the thread into a fresh provider context (`app_summary`).
 */
export const CompactionDirection = {
  providerNative: "provider_native",
  appSummary: "app_summary",
} as const;
export type CompactionDirection = (typeof CompactionDirection)[keyof typeof CompactionDirection];
export const CompactionDirectionSchema = z.enum(CompactionDirection);

export const RunInterruptOutcome = {
  interrupted: "interrupted",
  alreadyTerminal: "already_terminal",
  failed: "failed",
} as const;
export type RunInterruptOutcome = (typeof RunInterruptOutcome)[keyof typeof RunInterruptOutcome];
export const RunInterruptOutcomeSchema = z.enum(RunInterruptOutcome);

export const NoticeLevel = {
  info: "info",
  warning: "warning",
} as const;
export type NoticeLevel = (typeof NoticeLevel)[keyof typeof NoticeLevel];
export const NoticeLevelSchema = z.enum(NoticeLevel);

/** A secret is never stored in the log: the item records only whether it was supplied. */
export const SecretRequestStatus = {
  pending: "pending",
  provided: "provided",
  declined: "declined",
  cancelled: "cancelled",
} as const;
export type SecretRequestStatus = (typeof SecretRequestStatus)[keyof typeof SecretRequestStatus];
export const SecretRequestStatusSchema = z.enum(SecretRequestStatus);
