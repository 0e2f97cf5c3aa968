import type { IncomingMessage, ServerResponse } from "node:http";
import { CLOSE_CONNECTION, forbiddenKeyPath, readBody } from "./body.js";
import { acceptEncodingOf, negotiatedBody } from "./compression.js";

/** A route handler returns true when it handled the request. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra answer headers (`Connection: close` after a body that was not read). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** A JSON answer, compressed by the request's Accept-Encoding (src/http/compression.ts). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const negotiated = negotiatedBody(Buffer.from(JSON.stringify(body), "utf8"), acceptEncodingOf(res.req));
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers, ...negotiated.headers });
  res.end(negotiated.body);
}

export function sendError(res: ServerResponse, error: HttpError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message } }, { ...error.headers, ...headers });
}

/**
 * Read and parse a JSON body. Too large is a 413 that closes the connection
 * (src/http/body.ts); empty, not JSON, or using a prototype key
 * (`__proto__`, `constructor`) is a 400. Nothing is acted on for any of them.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const read = await readBody(req, MAX_BODY_BYTES);
  if (!read.ok) {
    if (read.reason === "too_large") throw new HttpError(413, "body_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`, CLOSE_CONNECTION);
    throw new HttpError(400, "invalid_json", "request body could not be read", CLOSE_CONNECTION);
  }
  const text = read.bytes.toString("utf8");
  if (text.trim() === "") throw new HttpError(400, "invalid_json", "request body is empty; expected a JSON command");
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(error as Error).message}`);
  }
  const forbidden = forbiddenKeyPath(value);
  if (forbidden !== null) throw new HttpError(400, "invalid_request", `request body uses the reserved key ${forbidden}; __proto__ and constructor are not accepted anywhere in a body`);
  return value;
}

/** Decode one percent-encoded path segment; a malformed encoding is a 400, not a crash. */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "invalid_request", `malformed percent-encoding in path segment ${JSON.stringify(segment)}`);
  }
}

/** The bearer token of a request, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
