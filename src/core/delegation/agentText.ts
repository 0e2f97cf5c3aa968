/**
 * Text an agent wrote, cleaned for the people and agents Loom shows it to.
 * Claude Code wraps its own bookkeeping for the model in
 * `<system-reminder>…</system-reminder>` blocks (environment facts, tool
 * result notes); a model that quotes a tool result carries them into its
 * answer. Task summaries and parent notices leave them out.
 */
const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;

/** The text without system-reminder blocks, trimmed; null stays null. */
export function withoutSystemReminders(text: string): string;
export function withoutSystemReminders(text: string | null): string | null;
export function withoutSystemReminders(text: string | null): string | null {
  if (text === null || !text.includes("<system-reminder>")) return text;
  return text.replace(REMINDER, "").replace(/\n{3,}/g, "\n\n").trim();
}
