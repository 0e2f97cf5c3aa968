/**
 * Claude's bookkeeping requests: a session title (system prompt "You are naming
 * a coding session ... Return JSON with a single "title" field", user turn
 * "<session>...</session>", no tools), tool-use labels and summaries, and a
 * one-token "quota" probe. They are answered without consulting rules, so a
 * rule meant for the conversation is never spent on one.
 */
import type { NormalizedRequest } from "../../modelServer/normalized.js";

export const SIDE_TITLE = "Scripted session";

const SIDE_SYSTEM = /\b(title|topic|label|summar(y|ize|ise|izing))/i;
const MAIN_SYSTEM = /You are Claude Code|Claude Agent SDK/;

function lastUser(request: NormalizedRequest): string {
  return request.messages.findLast((message) => message.role === "user")?.text ?? "";
}

/** Only Anthropic requests without tools can be side requests. */
export function isSideRequest(request: NormalizedRequest): boolean {
  if (request.api !== "anthropic" || request.tools.length > 0) return false;
  const user = lastUser(request).trim();
  if (user === "quota" || request.maxTokens === 1) return true;
  if (user.startsWith("<session>")) return true;
  return SIDE_SYSTEM.test(request.system) && !MAIN_SYSTEM.test(request.system);
}

/** A title request is parsed as JSON `{ title }`; anything else gets a short text. */
export function sideReplyText(request: NormalizedRequest): string {
  return /\btitle\b/i.test(request.system) ? JSON.stringify({ title: SIDE_TITLE }) : SIDE_TITLE;
}
