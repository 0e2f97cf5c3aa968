import { createReadStream } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError, toFailure } from "../app/errors.js";
import { SendModeSchema } from "../contracts/commands/runCommands.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import { HttpError, type RouteHandler, decodePathSegment, readJsonBody, sendJson } from "../http/http.js";
import { isOwnerRequest } from "./ownerAuth.js";
import { statusOf } from "./routes.js";

/**
 * The owner's guest share routes (docs/guest-share.md), bearer token or the
 * web UI's session:
 *   GET    /api/threads/:threadId/guest-share     the share: link while open, guest, messages
 *   POST   /api/threads/:threadId/guest-share     open (or hand back the open link)
 *   DELETE /api/threads/:threadId/guest-share     close at once
 *   GET    /api/guest-messages                    pending guest messages on every thread
 *   POST   /api/threads/:threadId/guest-messages/:id/send     { mode? }
 *   POST   /api/threads/:threadId/guest-messages/:id/dismiss
 *   GET    /api/threads/:threadId/guest-messages/:id/attachments/:attachmentId   the file, as a download
 * A guest's cookie is never read here: it is scoped to its share's page.
 */
export interface GuestShareRouteOptions {
  readonly app: App;
  readonly ownerTokenHash: Buffer;
  readonly alsoOwner?: (req: IncomingMessage) => boolean;
}

const SHARE_PATH = /^\/api\/threads\/([^/]+)\/guest-share$/;
const MESSAGE_PATH = /^\/api\/threads\/([^/]+)\/guest-messages\/([^/]+)\/(send|dismiss)$/;
const ATTACHMENT_PATH = /^\/api\/threads\/([^/]+)\/guest-messages\/([^/]+)\/attachments\/([^/]+)$/;
const INBOX_PATH = "/api/guest-messages";
const SendBody = z.object({ mode: SendModeSchema.optional() }).strict();

export function guestShareRoutes(options: GuestShareRouteOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  const route = async (req: IncomingMessage, url: URL): Promise<unknown> => {
    const method = req.method ?? "GET";
    const share = SHARE_PATH.exec(url.pathname);
    if (share !== null) {
      const threadId = decodePathSegment(share[1]!);
      if (method === "GET") return app.readGuestShare(owner, { threadId });
      if (method === "POST") return app.openGuestShare(owner, { threadId });
      if (method === "DELETE") return app.closeGuestShare(owner, { threadId });
      throw new HttpError(405, "method_not_allowed", "use GET, POST or DELETE");
    }
    const message = MESSAGE_PATH.exec(url.pathname);
    if (message !== null) {
      if (method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      const threadId = decodePathSegment(message[1]!);
      const guestMessageId = decodePathSegment(message[2]!);
      if (message[3] === "dismiss") return app.dismissGuestMessage(owner, { threadId, guestMessageId });
      const parsed = SendBody.safeParse(req.headers["content-length"] === "0" || req.headers["content-length"] === undefined ? {} : await readJsonBody(req));
      if (!parsed.success) throw new AppError("invalid_request", `invalid request: ${formatZodIssues(parsed.error)}`);
      return app.sendGuestMessage(owner, { threadId, guestMessageId, ...(parsed.data.mode === undefined ? {} : { mode: parsed.data.mode }) });
    }
    if (method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    return app.listGuestMessages(owner);
  };
  /** An attachment goes out as a download under its declared type, never rendered by the browser as a page. */
  const download = async (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray): Promise<void> => {
    if ((req.method ?? "GET") !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    const input = { threadId: decodePathSegment(match[1]!), guestMessageId: decodePathSegment(match[2]!), attachmentId: decodePathSegment(match[3]!) };
    const { attachment, path } = app.readGuestAttachment(owner, input);
    res.writeHead(200, {
      "content-type": attachment.type,
      "content-length": String(attachment.size),
      "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(attachment.name)}`,
      "content-security-policy": "default-src 'none'; sandbox",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    });
    await pipeline(createReadStream(path), res);
  };
  return async (req, res, url) => {
    const attachment = ATTACHMENT_PATH.exec(url.pathname);
    const mine = attachment !== null || SHARE_PATH.test(url.pathname) || MESSAGE_PATH.test(url.pathname) || url.pathname === INBOX_PATH;
    if (!mine) return false;
    if (!isOwnerRequest(req, options.ownerTokenHash) && options.alsoOwner?.(req) !== true) {
      sendJson(res, 401, { error: { code: "unauthorized", message: "missing or invalid bearer token" } }, { "www-authenticate": "Bearer" });
      return true;
    }
    try {
      if (attachment !== null) await download(req, res, attachment);
      else sendJson(res, 200, await route(req, url), { "cache-control": "no-store" });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      sendJson(res, statusOf(error), { error: toFailure(error) });
    }
    return true;
  };
}
