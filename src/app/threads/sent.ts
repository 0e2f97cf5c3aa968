import type { Run } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import type { AppContext, Executed } from "../context.js";
import { touched, touchedUserMessage } from "../touched.js";

type UserMessage = Extract<TurnItem, { type: "user_message" }>;

/**
 * Where a message.dispatch put the message: its timeline item and the run it
 * started, joined or queued. Read from the command's own events; a retried
 * command wrote nothing this time, so its earlier item is looked up instead.
 */
export function sentMessage(ctx: Pick<AppContext, "orchestrator">, executed: Executed, threadId: string, messageId: string): { item: UserMessage | null; run: Run | null } {
  const state = ctx.orchestrator.state;
  const found = touched(executed.events);
  const item = touchedUserMessage(found, messageId) ?? ctx.orchestrator.timeline.userMessage(threadId, messageId) ?? null;
  const runId = item?.runId ?? null;
  const run = runId === null ? null : (found.runs.get(runId) ?? state.runs.get(runId) ?? null);
  return { item, run };
}

/** Who wrote a message, as the thread's provenance records it (spec 000: createdBy, creationSource). */
export function actorOf(kind: "thread" | "owner") {
  return { createdBy: kind === "thread" ? ("agent" as const) : ("user" as const), creationSource: "mcp" as const };
}
