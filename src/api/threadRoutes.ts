import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app/app.js";
import type { Caller } from "../app/caller.js";
import { fail } from "../app/errors.js";
import { decodePathSegment, sendJson } from "../http/http.js";
import { compactRecord, wireOptionsOf } from "./wireCompaction.js";

const THREAD_ROUTE = /^\/api\/orchestration\/threads\/([^/]+)\/(snapshot|transcript|bounded-snapshot|history-page)$/;

/** A whole-number query parameter, or undefined when absent; anything else is invalid_request. */
function intParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) fail("invalid_request", `${name} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/**
 * GET /api/orchestration/threads/:threadId/{snapshot,transcript,bounded-snapshot,history-page}
 * (spec 004 §3.3). Returns false for any other path.
 */
export async function threadRoute(app: App, caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const match = THREAD_ROUTE.exec(url.pathname);
  if (match === null || req.method !== "GET") return false;
  const threadId = decodePathSegment(match[1]!);
  const options = wireOptionsOf(url);
  switch (match[2]) {
    case "snapshot":
      sendJson(res, 200, compactRecord(await app.getThreadProjection(caller, threadId), options));
      return true;
    case "transcript":
      sendJson(res, 200, compactRecord(await app.getTranscript(caller, threadId), { compactIds: options.compactIds }));
      return true;
    case "bounded-snapshot": {
      const limit = intParam(url, "limit");
      sendJson(res, 200, compactRecord(await app.getBoundedSnapshot(caller, threadId, limit === undefined ? {} : { turnItemLimit: limit }), options));
      return true;
    }
    case "history-page": {
      const limit = intParam(url, "limit");
      const cursor = url.searchParams.get("cursor") ?? undefined;
      const page = await app.getHistoryPage(caller, threadId, { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) });
      sendJson(res, 200, compactRecord(page, { compactIds: options.compactIds }));
      return true;
    }
    default:
      return false;
  }
}
