import type { CanUseTool, PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ApprovalRequestItem, ApprovalRequestKind, ProviderItem, UserInputRequestItem } from "../events.js";
import { QUESTION_TOOL, asRecord } from "./claudeEvents.js";

/**
 * The approvals concern (STYLE rule 4). Claude Code asks the host before a
 * tool call its permission mode does not allow by itself (`canUseTool`); the
 * broker turns that into an approval_request item, or, for AskUserQuestion,
 * a user_input_request item, and waits for Loom's respondToRequest:
 *
 *   approval: { decision: "accept" | "accept_for_session" | "decline" | "cancel" } | { dismissed: true }
 *   question: { answers: { q1: ["text", ...] } } | { dismissed: true }
 *
 * accept → allow; accept_for_session → allow plus Claude's suggested rules,
 * kept for this session only; decline → deny (the model is told and goes
 * on); cancel or dismissed → deny and interrupt the turn. Answers go back as
 * AskUserQuestion's `answers` input (question text → answer, several answers
 * comma-separated), which is how Claude Code reads them.
 */

const AnswerText = z.union([z.string(), z.array(z.string()).transform((parts) => parts.join(", "))]);
const QuestionResponseSchema = z.union([
  z.object({ dismissed: z.literal(true) }),
  z.object({ answers: z.record(z.string(), AnswerText) }),
]);
const ApprovalResponseSchema = z.union([
  z.object({ decision: z.enum(["accept", "accept_for_session", "acceptForSession", "decline", "cancel"]) }),
  z.object({ dismissed: z.literal(true) }),
]);

export type ApprovalDecision = "accept" | "accept_for_session" | "decline" | "cancel";

export function parseApprovalResponse(response: unknown): ApprovalDecision | null {
  const parsed = ApprovalResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  if ("dismissed" in parsed.data) return "cancel";
  return parsed.data.decision === "acceptForSession" ? "accept_for_session" : parsed.data.decision;
}

/** Answers by question id, or "dismissed"; null for another shape. */
export function parseQuestionResponse(response: unknown): Readonly<Record<string, string>> | "dismissed" | null {
  const parsed = QuestionResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  return "dismissed" in parsed.data ? "dismissed" : parsed.data.answers;
}

/** Which of Loom's approval kinds a Claude tool call is. */
export function requestKindOf(toolName: string): ApprovalRequestKind {
  switch (toolName) {
    case "Bash":
      return "command";
    case "Edit":
    case "Write":
    case "MultiEdit":
    case "NotebookEdit":
      return "file-change";
    case "Read":
    case "Glob":
    case "Grep":
      return "file-read";
    default:
      return "permission";
  }
}

export interface PermissionPrompt {
  readonly title?: string;
  readonly description?: string;
  readonly decisionReason?: string;
  readonly blockedPath?: string;
}

const DETAIL_CHARS = 4_000;
/** Claude's plan-mode exit; its permission request comes without the plan. */
export const PLAN_TOOL = "ExitPlanMode";

/** The approval_request item for one canUseTool call. */
export function approvalItem(requestId: string, toolName: string, input: Record<string, unknown>, prompt: PermissionPrompt): ApprovalRequestItem {
  const kind = requestKindOf(toolName);
  const command = typeof input.command === "string" ? input.command : null;
  const path = [input.file_path, input.notebook_path, input.path].find((value): value is string => typeof value === "string") ?? null;
  if (toolName === PLAN_TOOL) {
    const plan = typeof input.plan === "string" && input.plan.trim() !== "" ? input.plan : "(the plan is in Claude's ExitPlanMode call)";
    return {
      kind: "approval_request",
      requestId,
      requestKind: kind,
      title: "Approve the plan and leave plan mode",
      detail: `${plan}\n\nAccepting lets Claude edit files and run commands for the rest of this session.`.slice(0, DETAIL_CHARS),
    };
  }
  let title = prompt.title;
  if (title === undefined) {
    if (kind === "command" && command !== null) title = `Run command: ${command}`;
    else if (kind === "file-change" && path !== null) title = `${toolName} ${path}`;
    else title = `Use tool ${toolName}`;
  }
  const lines = [
    kind === "command" && command !== null ? `$ ${command}` : null,
    prompt.description !== undefined && prompt.description !== toolName ? prompt.description : null,
    prompt.decisionReason !== undefined ? `Why: ${prompt.decisionReason}` : null,
    prompt.blockedPath !== undefined ? `Path: ${prompt.blockedPath}` : null,
    kind === "command" ? null : `Input: ${JSON.stringify(input)}`,
  ].filter((line): line is string => line !== null);
  return { kind: "approval_request", requestId, requestKind: kind, title: title.slice(0, 200), detail: lines.join("\n").slice(0, DETAIL_CHARS) };
}

export interface ClaudeQuestion {
  readonly id: string;
  /** The question as Claude asked it: Claude Code keys its answer by this text. */
  readonly text: string;
}

/** AskUserQuestion's questions with Loom ids q1, q2, ... Options are listed in the question text. */
export function questionsOf(input: Record<string, unknown>): { readonly questions: readonly ClaudeQuestion[]; readonly item: Omit<UserInputRequestItem, "requestId"> } {
  const raw = Array.isArray(input.questions) ? (input.questions as unknown[]) : [];
  const questions: ClaudeQuestion[] = [];
  const shown: { id: string; question: string }[] = [];
  raw.forEach((value, index) => {
    const record = asRecord(value);
    const text = typeof record?.question === "string" ? record.question : null;
    if (text === null) return;
    const id = `q${index + 1}`;
    const options = (Array.isArray(record?.options) ? (record.options as unknown[]) : []).flatMap((option) => {
      const label = asRecord(option)?.label;
      const description = asRecord(option)?.description;
      if (typeof label !== "string") return [];
      return [typeof description === "string" && description !== "" ? `${label} (${description})` : label];
    });
    const multi = record?.multiSelect === true ? " (several allowed)" : "";
    questions.push({ id, text });
    shown.push({ id, question: options.length > 0 ? `${text}\nOptions${multi}: ${options.join("; ")}` : text });
  });
  return { questions, item: { kind: "user_input_request", questions: shown } };
}

/** The permission result for an approval decision. */
export function approvalResult(decision: ApprovalDecision, input: Record<string, unknown>, suggestions: readonly PermissionUpdate[] | undefined): PermissionResult {
  switch (decision) {
    case "accept":
      return { behavior: "allow", updatedInput: input };
    case "accept_for_session":
      return { behavior: "allow", updatedInput: input, updatedPermissions: sessionOnly(suggestions ?? []) };
    case "decline":
      return { behavior: "deny", message: "The user declined this tool call." };
    case "cancel":
      return { behavior: "deny", message: "The user cancelled this tool call and stopped the turn.", interrupt: true };
    default: {
      const unexpected: never = decision;
      throw new Error(`unexpected decision ${String(unexpected)}`);
    }
  }
}

/**
 * Claude suggests rules for its settings files (localSettings, ...); Loom's
 * "for this session" keeps them in the session. Mode changes are dropped:
 * approving one call never widens the thread's runtime mode.
 */
export function sessionOnly(suggestions: readonly PermissionUpdate[]): PermissionUpdate[] {
  return suggestions.filter((update) => update.type !== "setMode").map((update) => ({ ...update, destination: "session" }));
}

/** The permission result that hands the answers to AskUserQuestion. */
export function answerResult(input: Record<string, unknown>, questions: readonly ClaudeQuestion[], answers: Readonly<Record<string, string>> | "dismissed"): PermissionResult {
  if (answers === "dismissed") return { behavior: "deny", message: "The user dismissed the question without answering." };
  const byText: Record<string, string> = {};
  for (const question of questions) {
    const answer = answers[question.id];
    if (answer !== undefined) byText[question.text] = answer;
  }
  return { behavior: "allow", updatedInput: { ...input, answers: byText } };
}

interface Waiter {
  /** Returns false when the response has the wrong shape; the request stays open then. */
  readonly settle: (response: unknown) => boolean;
  readonly abandon: () => void;
}

/** Where the broker sends its request items; false when no turn is running to carry them. */
export type RequestItemSink = (itemId: string, item: ProviderItem) => boolean;

export class ClaudePermissionBroker {
  private readonly waiters = new Map<string, Waiter>();

  /** `knownInput` finds the input of the tool call as the model wrote it, when the request carries less. */
  constructor(
    private readonly sink: RequestItemSink,
    private readonly knownInput: (toolUseId: string) => Record<string, unknown> | undefined = () => undefined,
  ) {}

  /** For the SDK's `canUseTool` option. */
  readonly canUseTool: CanUseTool = (toolName, input, options) => {
    const requestId = `claude-request:${options.toolUseID}`;
    if (toolName === QUESTION_TOOL) {
      const { questions, item } = questionsOf(input);
      return this.ask(requestId, { ...item, requestId }, options.signal, (response) => {
        const answers = parseQuestionResponse(response);
        return answers === null ? null : answerResult(input, questions, answers);
      });
    }
    const prompt: PermissionPrompt = {
      ...(options.title === undefined ? {} : { title: options.title }),
      ...(options.description === undefined ? {} : { description: options.description }),
      ...(options.decisionReason === undefined ? {} : { decisionReason: options.decisionReason }),
      ...(options.blockedPath === undefined ? {} : { blockedPath: options.blockedPath }),
    };
    const shown = Object.keys(input).length === 0 ? (this.knownInput(options.toolUseID) ?? input) : input;
    return this.ask(requestId, approvalItem(requestId, toolName, shown, prompt), options.signal, (response) => {
      const decision = parseApprovalResponse(response);
      return decision === null ? null : approvalResult(decision, input, options.suggestions);
    });
  };

  get pending(): number {
    return this.waiters.size;
  }

  /** Answer a waiting request. Throws ProviderError request_not_found or protocol_error (wrong shape). */
  respond(requestId: string, response: unknown): void {
    const waiter = this.waiters.get(requestId);
    if (waiter === undefined) throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${requestId} in this Claude session`);
    if (!waiter.settle(response)) {
      throw new ProviderError(
        ProviderErrorCode.protocol,
        `request ${requestId} expects { decision: "accept" | "accept_for_session" | "decline" | "cancel" }, { answers: { q1: ["text"] } } or { dismissed: true }`,
      );
    }
  }

  /** Deny every waiting request (the turn ended or the session stops). */
  abandonAll(): void {
    for (const waiter of [...this.waiters.values()]) waiter.abandon();
  }

  private ask(requestId: string, item: ProviderItem, signal: AbortSignal, decide: (response: unknown) => PermissionResult | null): Promise<PermissionResult> {
    return new Promise<PermissionResult>((resolve) => {
      const finish = (result: PermissionResult): void => {
        signal.removeEventListener("abort", onAbort);
        this.waiters.delete(requestId);
        resolve(result);
      };
      const onAbort = (): void => finish({ behavior: "deny", message: "The request was abandoned: the turn ended.", interrupt: true });
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(requestId, {
        settle: (response) => {
          const result = decide(response);
          if (result === null) return false;
          finish(result);
          return true;
        },
        abandon: onAbort,
      });
      // Registered before the item goes out, so an answer can never find no waiter.
      if (!this.sink(`${requestId}:request`, item)) onAbort();
    });
  }
}
