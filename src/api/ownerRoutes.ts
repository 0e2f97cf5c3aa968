import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { App } from "../app/app.js";
import type { Caller } from "../app/caller.js";
import { fail } from "../app/errors.js";
import { InboxResponseInput } from "../app/requests/inbox.js";
import { BudgetRaiseInput } from "../contracts/tools/budgetTools.js";
import { HttpError, decodePathSegment, readJsonBody, sendJson } from "../http/http.js";

const RESPOND_ROUTE = /^\/api\/requests\/([^/]+)\/respond$/;
const SWITCH_ROUTE = /^\/api\/threads\/([^/]+)\/switch$/;

/** The body of a switch now: the instance to move to, or none for the thread's first available failover instance. */
const SwitchBody = z.object({ providerInstanceId: z.string().min(1).max(512).optional() }).strict();

/**
 * The owner's everyday routes (docs/cli.md, HTTP API), behind the same owner
 * bearer as every /api/ route:
 *   GET  /api/threads/resolve?id=PREFIX      → { threadId }
 *   GET  /api/tasks/resolve?id=PREFIX        → { taskId } (a task or child thread id or prefix)
 *   GET  /api/threads/tree[?root=ID][&includeArchived=1] → ThreadTreeResult
 *   GET  /api/requests                       → { requests: InboxRequest[] }
 *   POST /api/requests/:requestId/respond    → InboxRespondResult; body: one of
 *        { decision } | { answer } | { answers } | { dismiss: true }
 *   POST /api/budgets/raise                  → t3_budget_raise's answer; body: its input
 *        (the web UI's Raise, docs/budgets.md "Pause and raise")
 *   POST /api/threads/:threadId/switch       → t3_thread_configure's answer; body: { providerInstanceId? }
 *        (switch now for a thread a usage limit stopped, docs/limits.md "Failover")
 * Ids in paths and queries may be unique prefixes. Returns false for any other path.
 */
export async function ownerRoute(app: App, caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const path = url.pathname;
  if (path === "/api/threads/resolve" && req.method === "GET") {
    const ref = url.searchParams.get("id");
    if (ref === null || ref === "") fail("invalid_request", "give the thread id or a prefix of it as ?id=");
    sendJson(res, 200, { threadId: app.resolveThreadId(ref) });
    return true;
  }
  if (path === "/api/tasks/resolve" && req.method === "GET") {
    const ref = url.searchParams.get("id");
    if (ref === null || ref === "") fail("invalid_request", "give the task id, its child thread's id, or a prefix of either as ?id=");
    sendJson(res, 200, { taskId: app.resolveTaskId(ref) });
    return true;
  }
  if (path === "/api/threads/tree" && req.method === "GET") {
    const root = url.searchParams.get("root");
    sendJson(res, 200, app.threadTree(caller, { ...(root === null ? {} : { threadId: root }), includeArchived: url.searchParams.get("includeArchived") === "1" }));
    return true;
  }
  if (path === "/api/requests") {
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    sendJson(res, 200, app.listInbox(caller));
    return true;
  }
  if (path === "/api/budgets/raise") {
    if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    const parsed = BudgetRaiseInput.safeParse(await readJsonBody(req));
    if (!parsed.success) fail("invalid_request", parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
    sendJson(res, 200, await app.raiseBudget(caller, parsed.data));
    return true;
  }
  const switched = SWITCH_ROUTE.exec(path);
  if (switched !== null) {
    if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    const parsed = SwitchBody.safeParse(await readJsonBody(req));
    if (!parsed.success) fail("invalid_request", parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
    sendJson(res, 200, await app.configureThread(caller, { threadId: app.resolveThreadId(decodePathSegment(switched[1]!)), failOver: true, ...parsed.data }));
    return true;
  }
  const respond = RESPOND_ROUTE.exec(path);
  if (respond !== null) {
    if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
    const parsed = InboxResponseInput.safeParse(await readJsonBody(req));
    if (!parsed.success) fail("invalid_request", parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; "));
    sendJson(res, 200, await app.respondToInboxRequest(caller, decodePathSegment(respond[1]!), parsed.data));
    return true;
  }
  return false;
}
