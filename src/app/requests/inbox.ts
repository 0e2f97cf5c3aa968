import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import { ApprovalDecisionSchema } from "../../contracts/turnItemParts.js";
import type { Caller } from "../caller.js";
import { type AppContext, execute } from "../context.js";
import { fail } from "../errors.js";
import { uniqueByPrefix } from "../threads/tree.js";

/**
 * The owner's inbox: every pending approval and question across threads, and
 * one way to answer any of them (docs/cli.md, Requests). The CLI and the HTTP
 * API are thin adapters over these two functions.
 */

export interface InboxRequest {
  readonly requestId: string;
  readonly threadId: string;
  readonly threadTitle: string;
  /** The thread's parent when it is a delegated child or fork, else null. */
  readonly parentThreadId: string | null;
  readonly runId: string;
  /** `user_input` for a question; an approval kind (command, file-change, ...) otherwise. */
  readonly kind: string;
  readonly approval: boolean;
  readonly blocking: boolean;
  readonly title: string;
  /** The command, path or questions, as the agent gave them. */
  readonly detail: string;
  readonly questions: readonly { readonly id: string; readonly question: string }[];
  readonly createdAt: string;
}

export interface InboxResult {
  readonly requests: readonly InboxRequest[];
}

/** POST /api/requests/:id/respond and `loom requests respond`: exactly one of these. */
export const InboxResponseInput = z
  .object({
    decision: ApprovalDecisionSchema.optional().describe("An approval's decision"),
    answer: z.string().min(1).max(200_000).optional().describe("The answer to a question with one part"),
    answers: z.record(z.string().min(1).max(200), z.string().max(200_000)).optional().describe("Answers by question id"),
    dismiss: z.literal(true).optional().describe("Close a question without an answer"),
  })
  .strict()
  .refine((input) => [input.decision, input.answer, input.answers, input.dismiss].filter((v) => v !== undefined).length === 1, {
    message: "give exactly one of decision, answer, answers or dismiss",
  });
export type InboxResponseInput = z.infer<typeof InboxResponseInput>;

export interface InboxRespondResult {
  readonly requestId: string;
  readonly threadId: string;
  readonly kind: string;
  /** resolved (answered or decided) or cancelled (a dismissed question). */
  readonly status: string;
  readonly resolution: Record<string, unknown> | null;
}

function questionsOf(request: RuntimeRequest): { id: string; question: string }[] {
  const raw = request.payload.questions;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((q: unknown) => {
    const { id, question } = (q ?? {}) as { id?: unknown; question?: unknown };
    return typeof id === "string" && typeof question === "string" ? [{ id, question }] : [];
  });
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
}

function ownerOnly(caller: Caller, what: string): void {
  if (caller.kind !== "owner") fail("capability_denied", `${what} is for the owner; agents use t3_pending_request_list and t3_pending_request_respond`);
}

/** Every pending request on a live thread, oldest first. */
export function listInbox(ctx: AppContext, caller: Caller): InboxResult {
  ownerOnly(caller, "the request inbox");
  const state = ctx.orchestrator.state;
  const requests: InboxRequest[] = [];
  for (const request of state.runtimeRequests.values()) {
    if (request.status !== "pending") continue;
    const thread = state.threads.get(request.threadId);
    if (thread === undefined || thread.deletedAt !== null) continue;
    const questions = questionsOf(request);
    const approval = request.kind !== "user_input";
    requests.push({
      requestId: request.id,
      threadId: thread.id,
      threadTitle: thread.title,
      parentThreadId: thread.lineage.parentThreadId,
      runId: request.runId,
      kind: request.kind,
      approval,
      blocking: request.blocking,
      title: approval ? text(request.payload.title) || request.kind : questions.length === 1 ? "Question" : `${questions.length} questions`,
      detail: approval ? text(request.payload.detail) : questions.map((q) => q.question).join("\n"),
      questions,
      createdAt: request.createdAt,
    });
  }
  requests.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return { requests };
}

/** A request id or a unique prefix of a pending one (with or without `runtime-request:`). */
export function resolveRequestId(ctx: AppContext, ref: string): RuntimeRequest {
  const state = ctx.orchestrator.state;
  const exact = state.runtimeRequests.get(ref);
  if (exact !== undefined) return exact;
  const pending = [...state.runtimeRequests.values()].filter((r) => r.status === "pending").map((r) => ({ id: r.id, label: `${r.kind} in ${r.threadId}` }));
  return state.runtimeRequests.get(uniqueByPrefix("request", ref, pending, "invalid_request", ["runtime-request:"]))!;
}

/** Answer a question or decide an approval, as the owner: the owner's authority covers approvals. */
export async function respondToInboxRequest(ctx: AppContext, caller: Caller, requestRef: string, input: InboxResponseInput): Promise<InboxRespondResult> {
  ownerOnly(caller, "answering from the inbox");
  const request = resolveRequestId(ctx, requestRef);
  if (request.status !== "pending") fail("invalid_request", `request ${request.id} is already ${request.status}`);
  const commandId = `cmd:inbox_respond:${randomUUID()}`;
  const threadId = request.threadId;
  if (request.kind === "user_input") {
    if (input.decision !== undefined) fail("invalid_request", `request ${request.id} is a question: answer it (--answer TEXT) or dismiss it, not --${input.decision === "accept" ? "approve" : "decline"}`);
    if (input.dismiss === true) {
      await execute(ctx, { type: "thread.user-input.dismiss", commandId, data: { threadId, requestId: request.id } });
    } else {
      const questions = questionsOf(request);
      let answers: Record<string, string[]>;
      if (input.answers !== undefined) {
        const unknown = Object.keys(input.answers).filter((id) => !questions.some((q) => q.id === id));
        if (unknown.length > 0) fail("invalid_request", `unknown question id(s): ${unknown.join(", ")}; expected ${questions.map((q) => q.id).join(", ")}`);
        answers = Object.fromEntries(Object.entries(input.answers).map(([id, value]) => [id, [value]]));
      } else {
        if (questions.length !== 1) fail("invalid_request", `request ${request.id} has ${questions.length} questions: answer each by id (${questions.map((q) => q.id).join(", ")})`);
        answers = { [questions[0]!.id]: [input.answer!] };
      }
      await execute(ctx, { type: "runtime-request.respond", commandId, data: { threadId, requestId: request.id, response: { answers } } });
    }
  } else {
    if (input.decision === undefined) fail("invalid_request", `request ${request.id} is an approval (${request.kind}): approve or decline it`);
    await execute(ctx, { type: "runtime-request.respond", commandId, data: { threadId, requestId: request.id, response: { decision: input.decision } } });
  }
  const after = ctx.orchestrator.state.runtimeRequests.get(request.id)!;
  return { requestId: after.id, threadId: after.threadId, kind: after.kind, status: after.status, resolution: after.resolution };
}
