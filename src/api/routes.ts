import type { IncomingMessage } from "node:http";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError, toFailure } from "../app/errors.js";
import { WS_TICKET_PATH } from "../contracts/wire/messages.js";
import { HttpError, type RouteHandler, readJsonBody, sendError, sendJson } from "../http/http.js";
import { type WsTicketBook, isOwnerRequest } from "./ownerAuth.js";
import { threadRoute } from "./threadRoutes.js";
import { ownerRoute } from "./ownerRoutes.js";
import { sessionRoute } from "./sessionRoutes.js";
import { traceRoute } from "./traceRoutes.js";
import { providerRoute } from "./providerRoutes.js";
import { compactRecord, wireOptionsOf } from "./wireCompaction.js";

export { sha256 } from "./ownerAuth.js";

export interface ApiOptions {
  readonly app: App;
  /** SHA-256 of the owner token: the raw token is never kept. */
  readonly ownerTokenHash: Buffer;
  readonly version: string;
  /** Where POST /api/ws-ticket issues WebSocket tickets; without it the route answers 404. */
  readonly tickets?: WsTicketBook;
  /** Also the owner: a request this accepts (the web UI's session cookie, src/api/uiSessions.ts). */
  readonly alsoOwner?: (req: IncomingMessage) => boolean;
}

/** The HTTP status a wire failure answers with. */
export function statusOf(error: AppError): number {
  switch (error.code) {
    case "thread_not_found":
    case "run_not_found":
    case "task_not_found":
      return 404;
    case "capability_denied":
      return 403;
    case "invalid_request":
      return 400;
    case "unsupported":
      return 501;
    default:
      return 409;
  }
}

/**
 * The orchestration HTTP API (spec 004 §3.3): health, dispatch, the five
 * snapshot endpoints and WebSocket tickets. Transport only: it authenticates
 * the owner and calls the app layer; failures answer `{ error: Failure }`.
 */
export function orchestrationRoutes(options: ApiOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  const isOwner = (req: IncomingMessage): boolean => isOwnerRequest(req, options.ownerTokenHash) || options.alsoOwner?.(req) === true;
  const route: RouteHandler = async (req, res, url) => {
    const path = url.pathname;
    if (path === "/health" && req.method === "GET") {
      sendJson(res, 200, { ok: true, environmentId: app.environmentId, version: options.version });
      return true;
    }
    if (!path.startsWith("/api/")) return false;
    if (!isOwner(req)) {
      sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
      return true;
    }
    if (path === "/api/orchestration/dispatch") {
      if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      const receipt = await app.dispatchCommand(owner, await readJsonBody(req));
      sendJson(res, receipt.status === "accepted" ? 200 : 409, receipt);
      return true;
    }
    if (path === WS_TICKET_PATH && options.tickets !== undefined) {
      if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      sendJson(res, 200, options.tickets.issue(), { "cache-control": "no-store" });
      return true;
    }
    if (path === "/api/orchestration/shell-snapshot" && req.method === "GET") {
      const limit = url.searchParams.get("limit");
      const cursor = url.searchParams.get("cursor");
      if (limit !== null && !/^\d{1,9}$/.test(limit)) throw new HttpError(400, "invalid_request", "limit must be a whole number");
      const snapshot = await app.getShellSnapshotPage(owner, {
        includeArchived: url.searchParams.get("includeArchived") === "1",
        omitIdleSubagents: url.searchParams.get("omitIdleSubagents") === "1",
        ...(limit === null ? {} : { limit: Number(limit) }),
        ...(cursor === null ? {} : { cursor }),
      });
      sendJson(res, 200, compactRecord(snapshot, wireOptionsOf(url)));
      return true;
    }
    if (await threadRoute(app, owner, req, res, url)) return true;
    if (await ownerRoute(app, owner, req, res, url)) return true;
    if (await sessionRoute(app, owner, req, res, url)) return true;
    if (await traceRoute(app, owner, req, res, url)) return true;
    if (await providerRoute(app, req, res, url)) return true;
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${path}`);
  };
  return async (req, res, url) => {
    try {
      return await route(req, res, url);
    } catch (error) {
      // AppError (CommandInputError included): the wire Failure, as MCP and WebSocket send it.
      if (error instanceof AppError) {
        sendJson(res, statusOf(error), { error: toFailure(error) });
        return true;
      }
      // A body that is not JSON or too large is a bad request like any other.
      if (error instanceof HttpError && (error.status === 400 || error.status === 413)) {
        sendJson(res, error.status, { error: toFailure(new AppError("invalid_request", error.message, { details: { reason: error.code } })) }, { ...error.headers });
        return true;
      }
      throw error;
    }
  };
}
