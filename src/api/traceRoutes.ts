import type { IncomingMessage, ServerResponse } from "node:http";
import type { Caller } from "../app/caller.js";
import type { App } from "../app/app.js";
import { HttpError, decodePathSegment, sendJson } from "../http/http.js";

const TRACE_ROUTE = /^\/api\/traces\/([^/]+)$/;

/**
 * A tree's spans (docs/telemetry.md), behind the owner bearer:
 *   GET /api/traces/:threadId → TreeTrace { traceId, rootThreadId, spans }
 * `:threadId` is any thread of the tree. Returns false for any other path.
 */
export async function traceRoute(app: App, caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const match = TRACE_ROUTE.exec(url.pathname);
  if (match === null) return false;
  if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
  sendJson(res, 200, await app.readThreadTrace(caller, { threadId: decodePathSegment(match[1]!) }));
  return true;
}
