import type { IncomingMessage } from "node:http";

/**
 * Reading request bodies with a size limit, shared by the transports.
 *
 * A body over the limit is answered 413 only after the client has finished
 * sending it: the rest is read and dropped (never buffered) up to
 * MAX_DRAIN_BYTES, so the client reads the 413 instead of a broken pipe, and
 * the answer carries `Connection: close`, so a keep-alive client never sends
 * its next request on a connection the server is about to end. A body larger
 * than the drain bound is answered at once and its connection closed.
 */

/** The most bytes of an oversized body read and dropped before answering 413. */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

export type BodyResult = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly reason: "too_large" | "unreadable" };

/** Headers of an answer to a body that was not (fully) read: the connection ends with it. */
export const CLOSE_CONNECTION: Readonly<Record<string, string>> = { connection: "close" };

export function readBody(req: IncomingMessage, limit: number, drainLimit = MAX_DRAIN_BYTES): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > drainLimit) return Promise.resolve({ ok: false, reason: "too_large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      req.off("data", onData);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > drainLimit) {
        settle({ ok: false, reason: "too_large" });
        // Stop reading; the answer closes the connection.
        req.pause();
      } else if (size <= limit) {
        chunks.push(chunk);
      } else {
        chunks.length = 0;
      }
    };
    req.on("data", onData);
    req.on("error", () => settle({ ok: false, reason: "unreadable" }));
    req.on("end", () => settle(size > limit ? { ok: false, reason: "too_large" } : { ok: true, bytes: Buffer.concat(chunks) }));
  });
}

/** The keys a JSON body may not use: they name an object's prototype machinery, never data. */
export const FORBIDDEN_JSON_KEYS: readonly string[] = ["__proto__", "constructor"];

/**
 * The path of the first forbidden key in a parsed JSON value (`threads[0].__proto__`),
 * or null. JSON.parse keeps `__proto__` as an own property; schema validation
 * would drop it silently, so it is refused at the JSON boundary instead.
 */
export function forbiddenKeyPath(value: unknown, path = ""): string | null {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = forbiddenKeyPath(item, `${path}[${index}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  for (const key of Object.keys(value)) {
    const here = path === "" ? key : `${path}.${key}`;
    if (FORBIDDEN_JSON_KEYS.includes(key)) return here;
    const found = forbiddenKeyPath((value as Record<string, unknown>)[key], here);
    if (found !== null) return found;
  }
  return null;
}
