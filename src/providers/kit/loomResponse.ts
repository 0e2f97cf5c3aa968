import { z } from "zod";

/**
 * Loom's answer to an approval_request or user_input_request, as
 * `respondToRequest` receives it (runtime-request.respond, or a dismissal):
 *
 *   approval: { decision: "accept" | "accept_for_session" | "decline" | "cancel" } | { dismissed: true }
 *   question: { answers: { <question id>: ["text", ...] | "text" } } | { dismissed: true }
 *
 * Drivers turn these into their agent's own answer; a response of the wrong
 * shape parses to null, which the driver reports as protocol_error.
 */

export const LoomApprovalDecision = {
  accept: "accept",
  acceptForSession: "accept_for_session",
  decline: "decline",
  cancel: "cancel",
} as const;
export type LoomApprovalDecision = (typeof LoomApprovalDecision)[keyof typeof LoomApprovalDecision];

const ApprovalResponseSchema = z.union([
  z.object({ decision: z.enum(["accept", "accept_for_session", "acceptForSession", "decline", "cancel"]) }),
  z.object({ dismissed: z.literal(true) }),
]);

const AnswerSchema = z.union([z.string().transform((text) => [text]), z.array(z.string())]);
const QuestionResponseSchema = z.union([z.object({ dismissed: z.literal(true) }), z.object({ answers: z.record(z.string(), AnswerSchema) })]);

/** The decision; a dismissal is "cancel"; null for another shape. */
export function parseApprovalDecision(response: unknown): LoomApprovalDecision | null {
  const parsed = ApprovalResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  if ("dismissed" in parsed.data) return LoomApprovalDecision.cancel;
  return parsed.data.decision === "acceptForSession" ? LoomApprovalDecision.acceptForSession : parsed.data.decision;
}

/** Answers by question id (each a list), or "dismissed"; null for another shape. */
export function parseQuestionAnswers(response: unknown): Readonly<Record<string, readonly string[]>> | "dismissed" | null {
  const parsed = QuestionResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  return "dismissed" in parsed.data ? "dismissed" : parsed.data.answers;
}

/** Whether a decision lets the agent go ahead. */
export function isApproved(decision: LoomApprovalDecision): boolean {
  return decision === LoomApprovalDecision.accept || decision === LoomApprovalDecision.acceptForSession;
}
