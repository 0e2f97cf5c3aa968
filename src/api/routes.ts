import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseCommand } from "../contracts/commands.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { HttpError, bearerToken, readJsonBody, sendError, sendJson } from "../http/http.js";

export interface ApiOptions {
  readonly orchestrator: Orchestrator;
  /** SHA-256 of the owner token: the raw token is never kept. */
  readonly ownerTokenHash: Buffer;
  readonly environmentId: string;
  readonly version: string;
}

/** A route handler returns true when it handled the request. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

const THREAD_SNAPSHOT = /^\/api\/orchestration\/threads\/([^/]+)\/snapshot$/;

/** The orchestration HTTP API (spec 004 §3.3): health, dispatch and snapshots. */
export function orchestrationRoutes(options: ApiOptions): RouteHandler {
  const { orchestrator } = options;
  const isOwner = (req: IncomingMessage): boolean => {
    const token = bearerToken(req);
    return token !== null && timingSafeEqual(sha256(token), options.ownerTokenHash);
  };
  return async (req, res, url) => {
    const path = url.pathname;
    if (path === "/health" && req.method === "GET") {
      sendJson(res, 200, { ok: true, environmentId: options.environmentId, version: options.version });
      return true;
    }
    if (!path.startsWith("/api/")) return false;
    if (!isOwner(req)) {
      sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
      return true;
    }
    if (path === "/api/orchestration/dispatch") {
      if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      const parsed = parseCommand(await readJsonBody(req), { allowInternal: false });
      if (!parsed.ok) throw new HttpError(400, parsed.failure.code, parsed.failure.message);
      const receipt = await orchestrator.dispatch(parsed.command);
      sendJson(res, receipt.status === "accepted" ? 200 : 409, receipt);
      return true;
    }
    if (path === "/api/orchestration/shell-snapshot" && req.method === "GET") {
      sendJson(res, 200, orchestrator.shellSnapshot({ includeArchived: url.searchParams.get("includeArchived") === "1" }));
      return true;
    }
    const match = THREAD_SNAPSHOT.exec(path);
    if (match && req.method === "GET") {
      const threadId = decodeURIComponent(match[1]!);
      const snapshot = orchestrator.threadSnapshot(threadId);
      if (snapshot === null) throw new HttpError(404, "thread_not_found", `thread ${threadId} does not exist`);
      sendJson(res, 200, snapshot);
      return true;
    }
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${path}`);
  };
}
