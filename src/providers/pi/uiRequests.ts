import type { ApprovalRequestItem, ProviderItem } from "../events.js";
import { isApproved, parseApprovalDecision, parseQuestionAnswers } from "../kit/loomResponse.js";

/**
 * The approvals concern of the pi driver (pure). Pi has no permission
 * system of its own; Loom's extension (bridge/piMcpBridge.ts) asks before
 * gated tools with `ctx.ui.confirm`, and other extensions may ask questions
 * with `select`, `input` or `editor`. In RPC mode each dialog is an
 * `extension_ui_request`: a confirm becomes an approval_request (its kind
 * from the `[loom:<kind>]` title prefix), the others a user_input_request
 * with one question `q1`. Loom's answer becomes the `extension_ui_response`.
 * Fire-and-forget requests (notify, setStatus, ...) need no answer.
 */

export type PendingDialog = { readonly id: string; readonly method: "confirm" | "select" | "input" | "editor" };

const LOOM_TITLE = /^\[loom:(command|file-change)\] ([\s\S]*)$/;

export function dialogItem(request: Record<string, unknown>): { pending: PendingDialog; itemId: string; item: ProviderItem } | null {
  const id = typeof request.id === "string" ? request.id : null;
  const method = request.method;
  if (id === null || (method !== "confirm" && method !== "select" && method !== "input" && method !== "editor")) return null;
  const title = typeof request.title === "string" ? request.title : "";
  const pending: PendingDialog = { id, method };
  if (method === "confirm") {
    const loom = LOOM_TITLE.exec(title);
    const item: ApprovalRequestItem = {
      kind: "approval_request",
      requestId: id,
      requestKind: loom?.[1] === "command" ? "command" : loom?.[1] === "file-change" ? "file-change" : "permission",
      title: loom?.[2] ?? title,
      detail: typeof request.message === "string" ? request.message : "",
    };
    return { pending, itemId: `request-${id}`, item };
  }
  const options = Array.isArray(request.options) ? request.options.filter((option): option is string => typeof option === "string") : [];
  const question = options.length > 0 ? `${title} (${options.join(" / ")})` : title;
  return { pending, itemId: `request-${id}`, item: { kind: "user_input_request", requestId: id, questions: [{ id: "q1", question }] } };
}

/** The extension_ui_response for Loom's answer, or null for a response of the wrong shape. */
export function dialogResponse(pending: PendingDialog, response: unknown): Record<string, unknown> | null {
  if (pending.method === "confirm") {
    const decision = parseApprovalDecision(response);
    return decision === null ? null : { type: "extension_ui_response", id: pending.id, confirmed: isApproved(decision) };
  }
  const answers = parseQuestionAnswers(response);
  if (answers === null) return null;
  const value = answers === "dismissed" ? undefined : (answers.q1 ?? Object.values(answers)[0])?.join(", ");
  return value === undefined ? { type: "extension_ui_response", id: pending.id, cancelled: true } : { type: "extension_ui_response", id: pending.id, value };
}

/** What a dialog nobody can answer gets (outside a turn, or when the turn ends). */
export function dialogCancel(pending: PendingDialog): Record<string, unknown> {
  return { type: "extension_ui_response", id: pending.id, cancelled: true };
}
