import type { Run } from "../../contracts/entities/runs.js";
import type { Changes } from "./changes.js";

/**
 * Provider control commands: a message that is one of these is an
 * instruction to the agent CLI itself (compact its context, log out), not
 * conversation. Such a turn cannot take steering or be restarted with new
 * input, and such a message cannot be steered into or restart another turn
 * (spec 000, t3_thread_send).
 */
export const PROVIDER_CONTROL_COMMANDS: readonly string[] = ["/compact", "/logout"];

/** True when the text is a provider control command (its first word, any arguments after it). */
export function isProviderControlMessage(text: string): boolean {
  const first = text.trimStart().split(/\s/, 1)[0]!.toLowerCase();
  return PROVIDER_CONTROL_COMMANDS.includes(first);
}

/** The text of the message that started the run, when it has one. */
export function runMessageText(changes: Changes, run: Run): string | null {
  if (run.messageId === null) return null;
  const items = changes.state.turnItems.get(run.threadId) ?? [];
  for (const item of items) if (item?.type === "user_message" && item.messageId === run.messageId) return item.text;
  return null;
}

/** True when the run was started by a provider control command. */
export function isProviderControlTurn(changes: Changes, run: Run): boolean {
  const text = runMessageText(changes, run);
  return text !== null && isProviderControlMessage(text);
}
