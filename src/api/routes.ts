import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { ownerCaller } from "../app/caller.js";
import { CommandInputError, dispatchCommand } from "../app/commands.js";
import type { AppContext } from "../app/context.js";
import { AppError } from "../app/errors.js";
import { getShellSnapshot, getThreadSnapshot } from "../app/snapshots.js";
import { HttpError, type RouteHandler, bearerToken, decodePathSegment, readJsonBody, sendError, sendJson } from "../http/http.js";

export interface ApiOptions {
  readonly app: AppContext;
  /** SHA-256 of the owner token: the raw token is never kept. */
  readonly ownerTokenHash: Buffer;
  readonly version: string;
}

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

const THREAD_SNAPSHOT = /^\/api\/orchestration\/threads\/([^/]+)\/snapshot$/;

/** The HTTP status a wire failure answers with. */
function statusOf(error: AppError): number {
  switch (error.code) {
    case "thread_not_found":
    case "run_not_found":
    case "task_not_found":
      return 404;
    case "capability_denied":
      return 403;
    case "invalid_request":
      return 400;
    default:
      return 409;
  }
}

/**
 * The orchestration HTTP API (spec 004 §3.3): health, dispatch and snapshots.
 * Transport only: it authenticates the owner and calls the app layer.
 */
export function orchestrationRoutes(options: ApiOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  const isOwner = (req: IncomingMessage): boolean => {
    const token = bearerToken(req);
    return token !== null && timingSafeEqual(sha256(token), options.ownerTokenHash);
  };
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
      const receipt = await dispatchCommand(app, owner, await readJsonBody(req));
      sendJson(res, receipt.status === "accepted" ? 200 : 409, receipt);
      return true;
    }
    if (path === "/api/orchestration/shell-snapshot" && req.method === "GET") {
      const limit = url.searchParams.get("limit");
      const cursor = url.searchParams.get("cursor");
      if (limit !== null && !/^\d{1,9}$/.test(limit)) throw new HttpError(400, "invalid_request", "limit must be a whole number");
      sendJson(
        res,
        200,
        getShellSnapshot(app, owner, {
          includeArchived: url.searchParams.get("includeArchived") === "1",
          ...(limit === null ? {} : { limit: Number(limit) }),
          ...(cursor === null ? {} : { cursor }),
        }),
      );
      return true;
    }
    const match = THREAD_SNAPSHOT.exec(path);
    if (match && req.method === "GET") {
      sendJson(res, 200, getThreadSnapshot(app, owner, decodePathSegment(match[1]!)));
      return true;
    }
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${path}`);
  };
  return async (req, res, url) => {
    try {
      return await route(req, res, url);
    } catch (error) {
      if (error instanceof CommandInputError) throw new HttpError(400, error.failure.code, error.failure.message);
      if (error instanceof AppError) throw new HttpError(statusOf(error), error.code, error.message);
      throw error;
    }
  };
}
