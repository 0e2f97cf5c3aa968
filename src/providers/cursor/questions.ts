import type { SDKCustomTool, SDKCustomToolResult } from "@cursor/sdk";
import type { UserInputRequestItem } from "../events.js";
import { parseQuestionAnswers } from "../kit/loomResponse.js";

/**
 * The approvals concern of the cursor driver. The SDK has no callback for
 * approvals or for Cursor's own questions, so Loom gives the local agent an
 * in-process tool, `loom_ask_user` (a custom tool: it never needs approval),
 * whose call becomes a user_input_request; the tool returns once Loom
 * answers it (or the turn ends, which dismisses it).
 */

export const QUESTION_TOOL = "loom_ask_user";

export interface QuestionBroker {
  /** Emits the request item for the running turn; false when no turn runs. */
  readonly ask: (itemId: string, item: UserInputRequestItem) => boolean;
}

interface Waiting {
  readonly questionIds: readonly string[];
  readonly resolve: (answers: Readonly<Record<string, readonly string[]>> | "dismissed") => void;
}

export class CursorQuestions {
  private readonly waiting = new Map<string, Waiting>();
  private asked = 0;

  constructor(private readonly broker: QuestionBroker) {}

  /** The custom tool to pass in local.customTools. */
  tool(): SDKCustomTool {
    return {
      description: "Ask the user one or more questions and wait for the answers. Use it when you need a decision you cannot make yourself.",
      inputSchema: {
        type: "object",
        properties: { questions: { type: "array", items: { type: "string" }, minItems: 1, description: "The questions, one per entry." } },
        required: ["questions"],
      },
      execute: (args) => this.execute(args),
    };
  }

  isPending(requestId: string): boolean {
    return this.waiting.has(requestId);
  }

  /** Answers a pending question; false when Loom's response has the wrong shape. */
  answer(requestId: string, response: unknown): boolean {
    const waiting = this.waiting.get(requestId);
    const answers = parseQuestionAnswers(response);
    if (waiting === undefined || answers === null) return false;
    this.waiting.delete(requestId);
    waiting.resolve(answers);
    return true;
  }

  /** The turn ended: every open question is dismissed. */
  dismissAll(): void {
    for (const waiting of this.waiting.values()) waiting.resolve("dismissed");
    this.waiting.clear();
  }

  private async execute(args: Record<string, unknown>): Promise<SDKCustomToolResult> {
    const questions = (Array.isArray(args.questions) ? args.questions : []).flatMap((entry, index) => (typeof entry === "string" && entry.trim() !== "" ? [{ id: `q${index + 1}`, question: entry }] : []));
    if (questions.length === 0) return { content: [{ type: "text", text: "Pass at least one question." }], isError: true };
    const requestId = `ask-${++this.asked}`;
    const answers = await new Promise<Readonly<Record<string, readonly string[]>> | "dismissed">((resolve) => {
      this.waiting.set(requestId, { questionIds: questions.map((q) => q.id), resolve });
      if (!this.broker.ask(`request-${requestId}`, { kind: "user_input_request", requestId, questions })) {
        this.waiting.delete(requestId);
        resolve("dismissed");
      }
    });
    if (answers === "dismissed") return { content: [{ type: "text", text: "The user dismissed the question without answering." }], isError: true };
    const text = questions.map((q) => `${q.question} → ${(answers[q.id] ?? []).join(", ") || "(no answer)"}`).join("\n");
    return { content: [{ type: "text", text }] };
  }
}
