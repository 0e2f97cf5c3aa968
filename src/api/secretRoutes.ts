import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError } from "../app/errors.js";
import { MAX_SECRET_LENGTH, SupplySecretInput } from "../contracts/tools/secretTools.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import { HttpError, type RouteHandler, bearerToken, decodePathSegment, sendError, sendJson } from "../http/http.js";
import { sha256 } from "./routes.js";

const SECRET_REQUESTS = /^\/api\/orchestration\/threads\/([^/]+)\/secret-requests$/;
const SECRET_REQUEST = /^\/api\/orchestration\/threads\/([^/]+)\/secret-requests\/([^/]+)$/;
/** A body bigger than the largest secret plus its JSON wrapping is refused unread. */
const MAX_SECRET_BODY_BYTES = MAX_SECRET_LENGTH * 6 + 1_024;

const SecretAnswerBody = z.object({ value: z.string().optional(), decline: z.literal(true).optional() }).strict();

export interface SecretRouteOptions {
  readonly app: App;
  /** SHA-256 of the owner token: the raw token is never kept. */
  readonly ownerTokenHash: Buffer;
}

/**
 * Owner-only routes for request_secret (docs/secrets.md):
 * `GET  /api/orchestration/threads/:threadId/secret-requests` lists a thread's requests (names, never values);
 * `POST /api/orchestration/threads/:threadId/secret-requests/:requestId` with `{ "value": "..." }` or
 * `{ "decline": true }` answers one. The body is read here and never echoed: a malformed one gets a
 * message that names what is wrong, not what was sent, and nothing of it is logged.
 */
export function secretRoutes(options: SecretRouteOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  const isOwner = (req: IncomingMessage): boolean => {
    const token = bearerToken(req);
    return token !== null && timingSafeEqual(sha256(token), options.ownerTokenHash);
  };
  return async (req, res, url) => {
    const list = SECRET_REQUESTS.exec(url.pathname);
    const one = list === null ? SECRET_REQUEST.exec(url.pathname) : null;
    if (list === null && one === null) return false;
    if (!isOwner(req)) {
      sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
      return true;
    }
    try {
      if (list !== null) {
        if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
        sendJson(res, 200, { threadId: decodePathSegment(list[1]!), requests: app.listSecretRequests(owner, decodePathSegment(list[1]!)) });
        return true;
      }
      if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      const body = SecretAnswerBody.safeParse(await readSecretBody(req));
      if (!body.success) throw new HttpError(400, "invalid_request", `invalid body: ${formatZodIssues(body.error)}; expected { "value": "..." } or { "decline": true }`);
      const input = SupplySecretInput.safeParse({ threadId: decodePathSegment(one![1]!), requestId: decodePathSegment(one![2]!), ...body.data });
      if (!input.success) throw new HttpError(400, "invalid_request", `invalid answer: ${formatZodIssues(input.error)}`);
      sendJson(res, 200, await app.supplySecret(owner, input.data));
      return true;
    } catch (error) {
      if (error instanceof AppError) throw new HttpError(error.code === "capability_denied" ? 403 : error.code === "thread_not_found" ? 404 : error.code === "invalid_request" ? 400 : 409, error.code, error.message);
      throw error;
    }
  };
}

/** The JSON body, parsed without ever putting its text into an error message. */
async function readSecretBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_SECRET_BODY_BYTES) throw new HttpError(413, "body_too_large", `request body exceeds ${MAX_SECRET_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    throw new HttpError(400, "invalid_json", 'request body is not valid JSON; expected { "value": "..." } or { "decline": true }');
  }
}
