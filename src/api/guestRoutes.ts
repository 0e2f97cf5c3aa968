import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { App } from "../app/app.js";
import { AppError, toFailure } from "../app/errors.js";
import { refused } from "../app/guestShare/guestShares.js";
import { GUEST_ATTACHMENT_LIMIT, GUEST_ATTACHMENT_MAX_BYTES, GUEST_SHARE_TTL_MS } from "../contracts/entities/guestShares.js";
import { CLOSE_CONNECTION, forbiddenKeyPath, readBody } from "../http/body.js";
import { HttpError, type RouteHandler, readJsonBody, sendError, sendJson } from "../http/http.js";
import { GUEST_PAGE_HTML, GUEST_PAGE_SCRIPT } from "./guestPage.js";
import { FailureLimiter } from "./guestRateLimit.js";

/**
 * The guest's routes (docs/guest-share.md), under /g/<shareId>.<mac>:
 *   GET  /g/<token>            the guest page (the same page for every link)
 *   GET  /g/page.js            its script
 *   GET  /g/<token>/view       the redacted view, for the browser the share is bound to
 *   POST /g/<token>/redeem     { guestName }: bind this browser (rate-limited)
 *   POST /g/<token>/messages   { text, attachments?: [{ name, type, data }] } (data in base64): a message for the owner's inbox
 * and the live view over WebSocket at /g/<token>/ws (src/api/guestSocket.ts).
 * A bad link, a closed or expired share and another browser all get the one
 * 404 answer. Writes need the server's own Origin and the CSRF header on top
 * of the SameSite=Strict cookie. Nothing here reads the owner's credentials,
 * and the guest cookie is read nowhere else.
 */
export const GUEST_COOKIE = "loom_guest";
const CSRF_HEADER = "x-loom-csrf";
/** A link token: a share id, a dot, and the 128-bit mac in base64url (22 characters). */
export const GUEST_PATH = /^\/g\/([A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{22})(?:\/(view|redeem|messages|ws))?$/;

export interface GuestRouteOptions {
  readonly app: App;
  /** The server's own origins: a write from any other is refused. */
  readonly allowedOrigins: () => readonly string[];
  /** Refused redemptions one address may have per window before it must wait. Default 10 a minute. */
  readonly redeemLimit?: { readonly max: number; readonly windowMs: number };
  readonly clock?: () => number;
}

const RedeemBody = z.object({ guestName: z.string().max(200) }).strict();
const Base64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Base64 characters of one attachment at the size limit, plus one quantum so a file one byte over is read and refused by name. */
const ATTACHMENT_DATA_MAX = Math.ceil((GUEST_ATTACHMENT_MAX_BYTES + 3) / 3) * 4;
const MessageBody = z
  .object({
    text: z.string().max(64_000),
    attachments: z
      .array(z.object({ name: z.string().min(1).max(200), type: z.string().min(1).max(200), data: z.string().max(ATTACHMENT_DATA_MAX).regex(Base64) }).strict())
      .max(GUEST_ATTACHMENT_LIMIT + 1)
      .optional(),
  })
  .strict();
/** The largest message body read: one more attachment than allowed at full size (so "too many" is answered by name), and the text. */
const MESSAGE_BODY_MAX_BYTES = (GUEST_ATTACHMENT_LIMIT + 1) * (ATTACHMENT_DATA_MAX + 512) + 64 * 1024;

/** The body of the one refusal: the same bytes whatever was wrong. */
export const GUEST_REFUSED_BODY = JSON.stringify({ error: toFailure(refused()) });

const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
};

export function sendRefused(res: ServerResponse): void {
  res.writeHead(404, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(GUEST_REFUSED_BODY);
}

/** The guest cookie of a request, or null. */
export function guestCookie(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (typeof header !== "string") return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === GUEST_COOKIE) return part.slice(eq + 1).trim();
  }
  return null;
}

/** A guest message's JSON body, bounded by MESSAGE_BODY_MAX_BYTES before it is read. */
async function readMessageBody(req: IncomingMessage): Promise<unknown> {
  const read = await readBody(req, MESSAGE_BODY_MAX_BYTES, MESSAGE_BODY_MAX_BYTES);
  if (!read.ok) {
    if (read.reason === "too_large") throw new HttpError(413, "body_too_large", `a guest message body is at most ${MESSAGE_BODY_MAX_BYTES} bytes`, CLOSE_CONNECTION);
    throw new HttpError(400, "invalid_json", "request body could not be read", CLOSE_CONNECTION);
  }
  let value: unknown;
  try {
    value = JSON.parse(read.bytes.toString("utf8")) as unknown;
  } catch (error) {
    throw new HttpError(400, "invalid_json", `request body is not valid JSON: ${(error as Error).message}`);
  }
  const forbidden = forbiddenKeyPath(value);
  if (forbidden !== null) throw new HttpError(400, "invalid_request", `request body uses the reserved key ${forbidden}`);
  return value;
}

export function guestRoutes(options: GuestRouteOptions): RouteHandler {
  const { app } = options;
  const limit = options.redeemLimit ?? { max: 10, windowMs: 60_000 };
  const limiter = new FailureLimiter(limit.max, limit.windowMs, options.clock ?? Date.now);
  const sameOrigin = (req: IncomingMessage): boolean => {
    const origin = req.headers.origin;
    return typeof origin === "string" && options.allowedOrigins().includes(origin) && req.headers[CSRF_HEADER] === "1";
  };
  const route = async (req: IncomingMessage, res: ServerResponse, token: string, action: string | undefined): Promise<void> => {
    const method = req.method ?? "GET";
    const credentials = { token, browserToken: guestCookie(req) };
    if (action === undefined) {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...PAGE_HEADERS });
      res.end(GUEST_PAGE_HTML);
      return;
    }
    if (action === "view") {
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      sendJson(res, 200, app.readGuestView(credentials), { "cache-control": "no-store" });
      return;
    }
    if (method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    if (!sameOrigin(req)) throw new HttpError(403, "forbidden_origin", `a guest write must come from this server's page with the ${CSRF_HEADER} header`);
    if (action === "redeem") {
      const address = req.socket.remoteAddress ?? "unknown";
      if (!limiter.allows(address)) throw new HttpError(429, "rate_limited", "too many refused attempts to open a guest link; try again later", { "retry-after": String(Math.ceil(limit.windowMs / 1000)) });
      const body = RedeemBody.safeParse(await readJsonBody(req));
      if (!body.success) throw new AppError("invalid_request", "the body must be { guestName }, a name of 1 to 40 characters");
      let browserToken: string;
      try {
        ({ browserToken } = await app.redeemGuestLink({ ...credentials, guestName: body.data.guestName }));
      } catch (error) {
        if (error instanceof AppError && error.code === "capability_denied") limiter.fail(address);
        throw error;
      }
      const maxAge = Math.ceil(GUEST_SHARE_TTL_MS / 1000);
      const cookie = `${GUEST_COOKIE}=${browserToken}; Path=/g/${token}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
      sendJson(res, 200, { ok: true }, { "set-cookie": cookie, "cache-control": "no-store" });
      return;
    }
    const body = MessageBody.safeParse(await readMessageBody(req));
    if (!body.success) {
      throw new AppError(
        "invalid_request",
        `the body must be { text, attachments? }: a message of 1 to 4,000 characters and at most ${GUEST_ATTACHMENT_LIMIT} attachments { name, type, data } of at most 10 MiB, data in base64`,
      );
    }
    const attachments = (body.data.attachments ?? []).map((attachment) => ({ name: attachment.name, type: attachment.type, data: Buffer.from(attachment.data, "base64") }));
    sendJson(res, 200, await app.submitGuestMessage(credentials, { text: body.data.text, attachments }), { "cache-control": "no-store" });
  };
  return async (req, res, url) => {
    const path = url.pathname;
    if (path !== "/g" && !path.startsWith("/g/")) return false;
    if (path === "/g/page.js" && req.method === "GET") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-cache" });
      res.end(GUEST_PAGE_SCRIPT);
      return true;
    }
    const match = GUEST_PATH.exec(path);
    if (match === null || match[2] === "ws") {
      sendRefused(res);
      return true;
    }
    try {
      await route(req, res, match[1]!, match[2]);
    } catch (error) {
      if (error instanceof AppError && error.code === "capability_denied") sendRefused(res);
      else if (error instanceof AppError) sendJson(res, 400, { error: toFailure(error) });
      else if (error instanceof HttpError) sendError(res, error);
      else throw error;
    }
    return true;
  };
}
