import { z } from "zod";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ApprovalRequestItem, UserInputRequestItem } from "../events.js";
import type { AcpExtensionRequest, AcpFlavor } from "./flavor.js";

/**
 * The Grok flavor (spec 000, "Grok ACP V2"): Grok's CLI speaks ACP
 * (`grok agent stdio`) and adds xAI extension requests. Its AskUserQuestion
 * tool blocks on `_x.ai/ask_user_question`; its ExitPlanMode tool on
 * `_x.ai/exit_plan_mode`. Both become Loom request items: a question is a
 * user_input_request, a plan is an approval_request.
 *
 *   ask_user_question  { sessionId, questions: [{ question, header?, options?: [{ label, description? }], multiSelect? }] }
 *     Loom { answers: { q1: ["label" | free text] } } → { outcome: "accepted", answers: { <question>: [labels] }, annotations? }
 *     (a free-text answer is sent as "Other" with the text as notes, as Grok's own UI does)
 *     Loom { dismissed: true } → { outcome: "cancelled" }
 *   exit_plan_mode  { sessionId, planContent }
 *     accept → { outcome: "approved" }; decline, cancel, dismissed → { outcome: "abandoned", feedback }
 *
 * Grok may send the methods with or without the leading underscore, and may
 * nest the fields under `params`; both are accepted.
 */

export const GROK_ASK_USER_QUESTION = ["_x.ai/ask_user_question", "x.ai/ask_user_question"] as const;
export const GROK_EXIT_PLAN_MODE = ["_x.ai/exit_plan_mode", "x.ai/exit_plan_mode"] as const;

const QuestionSchema = z.object({
  question: z.string().trim().min(1),
  header: z.string().nullish(),
  options: z.array(z.object({ label: z.string().trim().min(1), description: z.string().nullish() })).nullish(),
  multiSelect: z.boolean().nullish(),
});
const AskParamsSchema = z.object({ questions: z.array(QuestionSchema).min(1).max(20) });
const PlanParamsSchema = z.object({ planContent: z.string().nullish() });

const AnswersResponseSchema = z.union([
  z.object({ dismissed: z.literal(true) }),
  z.object({ answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])) }),
]);
const DecisionResponseSchema = z.union([
  z.object({ decision: z.enum(["accept", "accept_for_session", "acceptForSession", "decline", "cancel"]) }),
  z.object({ dismissed: z.literal(true) }),
]);

/** Grok sometimes wraps extension params as { params: {...} }. */
function unwrap(params: unknown): unknown {
  if (typeof params === "object" && params !== null && "params" in params && typeof params.params === "object") return params.params;
  return params;
}

const KEEP_PLANNING = "The user did not approve the plan. Stay in plan mode and ask what to change.";

export const grokExtensions: AcpExtensionRequest = {
  methods: [...GROK_ASK_USER_QUESTION, ...GROK_EXIT_PLAN_MODE],

  item(method, params, requestId) {
    if (isPlanMethod(method)) {
      const parsed = PlanParamsSchema.safeParse(unwrap(params));
      if (!parsed.success) return null;
      const item: ApprovalRequestItem = {
        kind: "approval_request",
        requestId,
        requestKind: "permission",
        title: "Approve the plan and leave plan mode",
        detail: parsed.data.planContent?.trim() ?? "",
      };
      return item;
    }
    const parsed = AskParamsSchema.safeParse(unwrap(params));
    if (!parsed.success) return null;
    const item: UserInputRequestItem = {
      kind: "user_input_request",
      requestId,
      questions: parsed.data.questions.map((question, index) => ({ id: `q${index + 1}`, question: questionText(question) })),
    };
    return item;
  },

  result(method, params, response) {
    if (isPlanMethod(method)) {
      const parsed = DecisionResponseSchema.safeParse(response);
      if (!parsed.success) throw new ProviderError(ProviderErrorCode.protocol, "a plan approval expects { decision } or { dismissed: true }");
      const approved = "decision" in parsed.data && parsed.data.decision !== "decline" && parsed.data.decision !== "cancel";
      return approved ? { outcome: "approved" } : { outcome: "abandoned", feedback: KEEP_PLANNING };
    }
    const parsed = AnswersResponseSchema.safeParse(response);
    if (!parsed.success) throw new ProviderError(ProviderErrorCode.protocol, "a Grok question expects { answers: { q1: [...] } } or { dismissed: true }");
    if ("dismissed" in parsed.data) return { outcome: "cancelled" };
    const given = parsed.data.answers;
    const questions = AskParamsSchema.parse(unwrap(params)).questions;
    const answers: Record<string, string[]> = {};
    const annotations: Record<string, { notes: string }> = {};
    questions.forEach((question, index) => {
      const answer = given[`q${index + 1}`];
      const chosen = (typeof answer === "string" ? [answer] : (answer ?? [])).filter((text: string) => text.trim() !== "");
      if (chosen.length === 0) return;
      const labels = new Set((question.options ?? []).map((option) => option.label));
      const known = chosen.filter((text: string) => labels.has(text));
      const free = chosen.filter((text: string) => !labels.has(text));
      answers[question.question] = free.length === 0 ? known : [...known, "Other"];
      if (free.length > 0) annotations[question.question] = { notes: free.join(", ") };
    });
    return Object.keys(annotations).length === 0 ? { outcome: "accepted", answers } : { outcome: "accepted", answers, annotations };
  },

  cancelled(method) {
    return isPlanMethod(method) ? { outcome: "abandoned", feedback: KEEP_PLANNING } : { outcome: "cancelled" };
  },
};

function isPlanMethod(method: string): boolean {
  return (GROK_EXIT_PLAN_MODE as readonly string[]).includes(method);
}

/** The question as a model reads it, options included (Loom's item keeps only id and text). */
function questionText(question: z.infer<typeof QuestionSchema>): string {
  const head = question.header != null && question.header.trim() !== "" ? `${question.header.trim()}: ` : "";
  const options = question.options ?? [];
  const list = options.map((option) => (option.description != null && option.description !== "" ? `${option.label} (${option.description})` : option.label));
  const choose = question.multiSelect === true ? "Options (several may be chosen)" : "Options";
  return options.length === 0 ? `${head}${question.question}` : `${head}${question.question}\n${choose}: ${list.join("; ")}`;
}

/** The `grok` driver: the shared ACP adapter plus xAI's extension requests. */
export const GROK_FLAVOR: AcpFlavor = {
  driver: "grok",
  label: "Grok",
  defaults: { command: "grok", args: ["agent", "stdio"] },
  extensions: [grokExtensions],
  // Spec 000: Grok's driver has no session/fork; app forks use portable context.
  nativeFork: false,
};
