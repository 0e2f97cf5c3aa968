import { z } from "zod";
import { ProviderError, ProviderErrorCode } from "../adapter.js";

/**
 * Requests a scripted turn is waiting on (the approvals concern): `ask`
 * steps wait for a user-input answer, `approve` steps for a decision. The
 * runner registers a request before it emits the item, so an answer can
 * never arrive for an id that is not yet waiting.
 *
 * Accepted responses:
 *   user input: { answers: { q1: "text" } } | { answer: "text" } | { dismissed: true }
 *   approval:   { decision: "accept" | "acceptForSession" | "decline" | "cancel" } | { dismissed: true }
 * An answer may be a list of strings (Loom's runtime-request.respond sends
 * `answers: { q1: ["text"] }`); it is joined with ", ". The decision
 * "accept_for_session" (Loom's contracts spelling) is read as "acceptForSession".
 * A dismissed approval counts as "cancel".
 */

export const RequestKind = {
  userInput: "user-input",
  approval: "approval",
} as const;
export type RequestKind = (typeof RequestKind)[keyof typeof RequestKind];

export const ApprovalDecision = {
  accept: "accept",
  acceptForSession: "acceptForSession",
  decline: "decline",
  cancel: "cancel",
} as const;
export type ApprovalDecision = (typeof ApprovalDecision)[keyof typeof ApprovalDecision];

export interface UserInputAnswer {
  /** The answer to the first question ("" when dismissed). */
  readonly answer: string;
  /** Answers by question id. */
  readonly answers: Readonly<Record<string, string>>;
  readonly dismissed: boolean;
}

const AnswerText = z.union([z.string(), z.array(z.string()).transform((parts) => parts.join(", "))]);
const UserInputResponseSchema = z.union([
  z.object({ dismissed: z.literal(true) }),
  z.object({ answer: AnswerText }),
  z.object({ answers: z.record(z.string(), AnswerText) }),
]);
const ApprovalResponseSchema = z.union([
  z.object({
    decision: z
      .enum(["accept", "acceptForSession", "accept_for_session", "decline", "cancel"])
      .transform((decision) => (decision === "accept_for_session" ? ApprovalDecision.acceptForSession : decision)),
  }),
  z.object({ dismissed: z.literal(true) }),
]);

/** The answer a user-input response carries, or null when it has another shape. */
export function parseUserInputResponse(response: unknown, firstQuestionId: string): UserInputAnswer | null {
  const parsed = UserInputResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  const value = parsed.data;
  if ("dismissed" in value) {
    return { answer: "", answers: { [firstQuestionId]: "" }, dismissed: true };
  }
  if ("answer" in value) {
    return { answer: value.answer, answers: { [firstQuestionId]: value.answer }, dismissed: false };
  }
  const answer = value.answers[firstQuestionId] ?? Object.values(value.answers)[0] ?? "";
  return { answer, answers: value.answers, dismissed: false };
}

/** The decision an approval response carries, or null when it has another shape. */
export function parseApprovalResponse(response: unknown): ApprovalDecision | null {
  const parsed = ApprovalResponseSchema.safeParse(response);
  if (!parsed.success) return null;
  return "decision" in parsed.data ? parsed.data.decision : ApprovalDecision.cancel;
}

interface Waiter {
  readonly kind: RequestKind;
  /** Returns false when the response has the wrong shape; the request stays open then. */
  readonly accept: (response: unknown) => boolean;
}

export class PendingRequests {
  private readonly waiters = new Map<string, Waiter>();
  private counter = 0;

  /** A new request id, unique within the session: `request-<n>`. */
  nextRequestId(): string {
    this.counter += 1;
    return `request-${this.counter}`;
  }

  /**
   * Wait for the response to `requestId`, parsed by `parse` (null: wrong
   * shape). Rejects when `signal` aborts; the request is forgotten then.
   */
  wait<T>(requestId: string, kind: RequestKind, parse: (response: unknown) => T | null, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(requestId);
        reject(new ProviderError(ProviderErrorCode.aborted, `request ${requestId} was abandoned: the turn ended`));
      };
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.set(requestId, {
        kind,
        accept: (response) => {
          const value = parse(response);
          if (value === null) return false;
          signal.removeEventListener("abort", onAbort);
          this.waiters.delete(requestId);
          resolve(value);
          return true;
        },
      });
    });
  }

  /** Answer a waiting request. Throws ProviderError request_not_found or protocol_error (wrong shape). */
  respond(requestId: string, response: unknown): void {
    const waiter = this.waiters.get(requestId);
    if (waiter === undefined) {
      throw new ProviderError(ProviderErrorCode.requestNotFound, `no open request ${requestId} in this session`);
    }
    if (!waiter.accept(response)) {
      throw new ProviderError(ProviderErrorCode.protocol, `request ${requestId} expects ${expectedShape(waiter.kind)}`);
    }
  }
}

function expectedShape(kind: RequestKind): string {
  switch (kind) {
    case RequestKind.userInput:
      return '{ answers: { q1: "text" } }, { answer: "text" } or { dismissed: true }';
    case RequestKind.approval:
      return '{ decision: "accept" | "acceptForSession" | "decline" | "cancel" } or { dismissed: true }';
    default: {
      const unexpected: never = kind;
      return String(unexpected);
    }
  }
}
