import { fail } from "../errors.js";

/**
 * History cursors are opaque to clients: base64url of the thread id and the
 * position the next page ends before. A cursor only works on its own thread.
 */
export function encodeHistoryCursor(threadId: string, before: number): string {
  return Buffer.from(JSON.stringify({ t: threadId, b: before }), "utf8").toString("base64url");
}

/** The position a cursor pages before; invalid_request for anything that is not this thread's cursor. */
export function decodeHistoryCursor(cursor: string, threadId: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = null;
  }
  const { t, b } = (parsed ?? {}) as { t?: unknown; b?: unknown };
  if (typeof b !== "number" || !Number.isInteger(b) || b < 0 || typeof t !== "string") fail("invalid_request", `cursor ${JSON.stringify(cursor)} is not a history cursor`);
  if (t !== threadId) fail("invalid_request", `the cursor belongs to another thread (${t}), not ${threadId}`);
  return b;
}
