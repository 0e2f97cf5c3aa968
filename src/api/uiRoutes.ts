import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError, toFailure } from "../app/errors.js";
import { HttpError, type RouteHandler, decodePathSegment, sendError, sendJson } from "../http/http.js";
import { isOwnerRequest } from "./ownerAuth.js";
import { statusOf } from "./routes.js";
import { UI_SESSION_COOKIE, type UiSessionBook, isUiSessionRequest, sessionCookie } from "./uiSessions.js";

/** The path a login link opens; `?code=` is spent and the browser is sent on to `/`. */
export const UI_LOGIN_PATH = "/login";
/** Owner-only: a fresh login link (what `loom open` prints). */
export const UI_LOGIN_LINK_PATH = "/api/ui/login-link";

export interface UiRouteOptions {
  readonly app: App;
  readonly ownerTokenHash: Buffer;
  readonly sessions: UiSessionBook;
  /** The server's own origins (read per request, once the port is known). */
  readonly allowedOrigins: () => readonly string[];
  /** The server's base URL, for the links it hands out. */
  readonly baseUrl: () => string;
}

/**
 * The web UI's own routes: sign-in (login links, the session cookie, sign-out)
 * and the reads the UI needs that the wire does not carry (provider
 * capabilities, a child thread's budget and spend, a launch's estimate, a workflow's panel, a tree's roll-up and waterfall). Mounted before the orchestration routes, which answer every
 * other /api/ path.
 */
/** `GET /api/ui/threads/:threadId/budget`: the budget of the delegated task whose child the thread is and its task id, for a raise (`{ budget: null, taskId: null }` without one). */
const BUDGET_PATH = /^\/api\/ui\/threads\/([^/]+)\/budget$/;
/** `GET /api/ui/estimate?providerInstanceId=&model=&role=`: what work on that provider is likely to spend, from its history (docs/budgets.md, "Estimate before launch"). */
const ESTIMATE_PATH = "/api/ui/estimate";
/** `GET /api/ui/workflows/:workflowId`: the workflow panel's read (t3_workflow_status's record with the description, step times and spend). */
const WORKFLOW_PATH = /^\/api\/ui\/workflows\/([^/]+)$/;
/** `GET /api/ui/trees/:rootThreadId` (the sidebar's roll-up) and `.../waterfall` (the tree's runs over time); any thread of the tree names it. */
const TREE_PATH = /^\/api\/ui\/trees\/([^/]+)(\/waterfall)?$/;

export function uiRoutes(options: UiRouteOptions): RouteHandler {
  const { sessions } = options;
  const owner = ownerCaller(options.app.environmentId);
  const signedIn = (req: IncomingMessage) => isUiSessionRequest(req, sessions, options.allowedOrigins);
  return async (req, res, url) => {
    const path = url.pathname;
    if (path === UI_LOGIN_PATH) {
      if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      redeem(url.searchParams.get("code"), sessions, res);
      return true;
    }
    if (!path.startsWith("/api/ui/")) return false;
    if (path === UI_LOGIN_LINK_PATH) {
      if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
      if (!isOwnerRequest(req, options.ownerTokenHash)) {
        sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
        return true;
      }
      const { code, expiresAt } = sessions.issueLoginCode();
      sendJson(res, 200, { url: `${options.baseUrl()}${UI_LOGIN_PATH}?code=${code}`, expiresAt }, { "cache-control": "no-store" });
      return true;
    }
    if (path === "/api/ui/session") {
      if (req.method === "GET") {
        // 200 either way: being signed out is an answer, not an error.
        sendJson(res, 200, { signedIn: signedIn(req) }, { "cache-control": "no-store" });
        return true;
      }
      if (req.method === "DELETE") {
        if (!signedIn(req)) throw new HttpError(401, "unauthorized", "not signed in");
        sessions.revoke(sessionCookie(req));
        sendJson(res, 200, { signedIn: false }, { "set-cookie": clearCookie() });
        return true;
      }
      throw new HttpError(405, "method_not_allowed", "use GET or DELETE");
    }
    /** A read for a signed-in page or the owner: GET only, uncached; the app's typed error answers as the orchestration routes answer it. */
    const read = async (answer: () => unknown, statusOfError: (error: AppError) => number = statusOf): Promise<true> => {
      if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
      if (!signedIn(req) && !isOwnerRequest(req, options.ownerTokenHash)) throw new HttpError(401, "unauthorized", "not signed in");
      try {
        sendJson(res, 200, await answer(), { "cache-control": "no-store" });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        sendJson(res, statusOfError(error), { error: toFailure(error) });
      }
      return true;
    };
    if (path === "/api/ui/capabilities") return read(() => options.app.uiCapabilities(owner));
    const budget = BUDGET_PATH.exec(path);
    if (budget !== null) return read(() => options.app.getChildThreadBudget(owner, decodePathSegment(budget[1]!)));
    const workflow = WORKFLOW_PATH.exec(path);
    // An unknown workflow is a missing resource here (the orchestration routes' table answers it 409).
    if (workflow !== null) return read(() => options.app.getUiWorkflow(owner, decodePathSegment(workflow[1]!)), (error) => (error.code === "workflow_not_found" ? 404 : statusOf(error)));
    const tree = TREE_PATH.exec(path);
    if (tree !== null) {
      const threadId = decodePathSegment(tree[1]!);
      return read(() => (tree[2] === undefined ? options.app.getTreeRollup(owner, threadId) : options.app.getTreeWaterfall(owner, threadId)));
    }
    if (path === ESTIMATE_PATH) return read(() => options.app.estimateTarget(owner, Object.fromEntries(url.searchParams)));
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${path}`);
  };
}

function redeem(code: string | null, sessions: UiSessionBook, res: ServerResponse): void {
  const token = code === null ? null : sessions.redeemLoginCode(code);
  const common = { "cache-control": "no-store", "referrer-policy": "no-referrer" };
  if (token === null) {
    const body = `<!doctype html><meta charset="utf-8"><title>Loom: sign-in failed</title><p>This login link was already used, has expired, or is not one this server issued. Run <code>loom open</code> for a new one.</p>\n`;
    res.writeHead(401, { ...common, "content-type": "text/html; charset=utf-8", "content-length": Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const cookie = `${UI_SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${sessions.sessionMaxAgeSeconds}`;
  // 303 to `/`: the code leaves the address bar and the history at once.
  res.writeHead(303, { ...common, location: "/", "set-cookie": cookie, "content-length": 0 });
  res.end();
}

function clearCookie(): string {
  return `${UI_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}
