import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app/app.js";
import type { Caller } from "../app/caller.js";
import { HttpError, decodePathSegment, sendJson } from "../http/http.js";

const RELEASE_ROUTE = /^\/api\/sessions\/([^/]+)\/release$/;

/**
 * The provider sessions Loom holds (docs/cli.md, HTTP API), behind the owner bearer:
 *   GET  /api/sessions                  → { sessions: SessionInfo[] }
 *   POST /api/sessions/:id/release      → { providerSessionId, threadId, interruptedRunId }
 * `:id` is a session id, its thread's id, or a unique prefix of either.
 * Returns false for any other path.
 */
export async function sessionRoute(app: App, caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const path = url.pathname;
  if (path === "/api/sessions") {
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    sendJson(res, 200, app.listSessions(caller));
    return true;
  }
  const release = RELEASE_ROUTE.exec(path);
  if (release !== null) {
    if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    sendJson(res, 200, await app.releaseSession(caller, decodePathSegment(release[1]!)));
    return true;
  }
  return false;
}
