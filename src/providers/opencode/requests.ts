import type { EventPermissionAsked, EventQuestionAsked } from "@opencode-ai/sdk/v2";
import type { ApprovalRequestItem, ApprovalRequestKind, UserInputRequestItem } from "../events.js";
import { isApproved, LoomApprovalDecision, parseApprovalDecision, parseQuestionAnswers } from "../kit/loomResponse.js";

/**
 * The approvals concern of the opencode driver (pure): OpenCode's
 * `permission.asked` becomes an approval_request and `question.asked` (its
 * question tool) a user_input_request; Loom's answer becomes the body of
 * `POST /permission/{id}/reply` or `/question/{id}/reply|reject`. Loom's
 * requestId is OpenCode's request id (`per_...`, `que_...`).
 */

export type PendingRequest =
  | { readonly kind: "permission"; readonly id: string }
  | { readonly kind: "question"; readonly id: string; readonly questionIds: readonly string[] };

export type RequestAnswer =
  | { readonly kind: "permission"; readonly id: string; readonly reply: "once" | "always" | "reject" }
  | { readonly kind: "question-reply"; readonly id: string; readonly answers: string[][] }
  | { readonly kind: "question-reject"; readonly id: string };

/** OpenCode's permission names, by the Loom approval kind they are. */
export function requestKindOf(permission: string): ApprovalRequestKind {
  switch (permission) {
    case "bash":
      return "command";
    case "edit":
    case "write":
    case "apply_patch":
      return "file-change";
    case "read":
    case "glob":
    case "grep":
    case "list":
    case "external_directory":
      return "file-read";
    default:
      return "permission";
  }
}

export function permissionItem(asked: EventPermissionAsked["properties"]): { pending: PendingRequest; itemId: string; item: ApprovalRequestItem } {
  const requestKind = requestKindOf(asked.permission);
  const command = typeof asked.metadata.command === "string" ? asked.metadata.command : null;
  const subject = command ?? asked.patterns.join(", ");
  const title = requestKind === "command" ? `Run ${subject}` : requestKind === "file-change" ? `Edit ${subject}` : `Allow ${asked.permission}${subject === "" ? "" : ` for ${subject}`}`;
  const detail = [asked.patterns.length > 0 ? `patterns: ${asked.patterns.join(", ")}` : null, asked.always.length > 0 ? `"always" would allow: ${asked.always.join(", ")}` : null]
    .filter((line): line is string => line !== null)
    .join("\n");
  return { pending: { kind: "permission", id: asked.id }, itemId: `request-${asked.id}`, item: { kind: "approval_request", requestId: asked.id, requestKind, title, detail } };
}

/** Question ids are q1, q2, ... in OpenCode's order (its questions have no ids of their own). */
export function questionItem(asked: EventQuestionAsked["properties"]): { pending: PendingRequest; itemId: string; item: UserInputRequestItem } {
  const questions = asked.questions.map((question, index) => {
    const options = question.options.map((option) => option.label).join(" / ");
    return { id: `q${index + 1}`, question: options === "" ? question.question : `${question.question} (${options})` };
  });
  return {
    pending: { kind: "question", id: asked.id, questionIds: questions.map((question) => question.id) },
    itemId: `request-${asked.id}`,
    item: { kind: "user_input_request", requestId: asked.id, questions },
  };
}

/** OpenCode's answer for Loom's response, or null when the response has the wrong shape. */
export function answerFor(pending: PendingRequest, response: unknown): RequestAnswer | null {
  if (pending.kind === "permission") {
    const decision = parseApprovalDecision(response);
    if (decision === null) return null;
    const reply = decision === LoomApprovalDecision.acceptForSession ? "always" : isApproved(decision) ? "once" : "reject";
    return { kind: "permission", id: pending.id, reply };
  }
  const answers = parseQuestionAnswers(response);
  if (answers === null) return null;
  if (answers === "dismissed") return { kind: "question-reject", id: pending.id };
  return { kind: "question-reply", id: pending.id, answers: pending.questionIds.map((id) => [...(answers[id] ?? [])]) };
}
