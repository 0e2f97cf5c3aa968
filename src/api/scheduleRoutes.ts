import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError, toFailure } from "../app/errors.js";
import type { StreamHandle } from "../app/orchestration/subscriptions.js";
import type { WebhookRefusal } from "../app/schedules/webhookSignatures.js";
import { ListScheduledTasksInput, ScheduleTaskInput, ScheduledTaskIdOnlyInput, UpdateScheduledTaskInput } from "../contracts/tools/scheduleTools.js";
import { parsedInput } from "./parsedInput.js";
import { CLOSE_CONNECTION, readBody } from "../http/body.js";
import { HttpError, type RouteHandler, decodePathSegment, readJsonBody, sendError, sendJson } from "../http/http.js";
import { isOwnerRequest } from "./ownerAuth.js";
import { statusOf } from "./routes.js";

const HOOK = /^\/hooks\/([^/]+)\/([^/]+)$/;
const TASKS = "/api/schedules";
const TASK = /^\/api\/schedules\/([^/]+)$/;
const RUN_NOW = /^\/api\/schedules\/([^/]+)\/run$/;
const CHANGES = "/api/schedules/changes";
/** A comment line on an idle change stream, so proxies and browsers keep it open. */
const KEEP_ALIVE_MS = 25_000;

export interface ScheduleRouteOptions {
  readonly app: App;
  readonly ownerTokenHash: Buffer;
  /** Also the owner: a request this accepts (the web UI's session cookie, src/api/uiSessions.ts). */
  readonly alsoOwner?: (req: IncomingMessage) => boolean;
  /** Where stale and replayed webhook deliveries are reported. */
  readonly log?: (line: string) => void;
}

/** The HTTP status of each refusal of a signed delivery. */
const REFUSAL_STATUS: { readonly [R in WebhookRefusal]: number } = {
  invalid_signature: 401,
  stale_timestamp: 401,
  replayed_delivery: 409,
};

/**
 * Scheduled tasks over HTTP (docs/schedules.md).
 *
 * `POST /hooks/:scheduledTaskId/:token` is the webhook trigger: no bearer
 * token (the URL's token is the credential, and a signature when the task
 * requires one). 202 with `{ status: "fired" | "skipped", ... }`, 401
 * `invalid_signature` for a missing or wrong signature, 401
 * `stale_timestamp` for a signed timestamp outside the window, 409
 * `replayed_delivery` for a delivery taken before, 404 for an unknown task
 * or token, 413 for a body over scheduler.webhookMaxBodyBytes.
 *
 * The owner's routes, with the owner bearer token, call the same app
 * functions as the MCP tools: `GET /api/schedules[?projectId=]`,
 * `POST /api/schedules` (schedule_task's input), `PATCH /api/schedules/:id`
 * (update_scheduled_task's fields), `DELETE /api/schedules/:id`,
 * `POST /api/schedules/:id/run` (run now), and `GET /api/schedules/changes`:
 * a server-sent event stream with one `changed` event (data `{ sequence }`)
 * per commit that saves, fires or deletes a task. The web UI's session cookie
 * counts as the owner too (writes with its CSRF header, docs/ui.md).
 */
export function scheduleRoutes(options: ScheduleRouteOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  return async (req, res, url) => {
    const hook = HOOK.exec(url.pathname);
    if (hook !== null) {
      await webhook(app, req, res, decodePathSegment(hook[1]!), decodePathSegment(hook[2]!), options.log);
      return true;
    }
    const path = url.pathname;
    if (path !== TASKS && !path.startsWith(`${TASKS}/`)) return false;
    if (!isOwnerRequest(req, options.ownerTokenHash) && options.alsoOwner?.(req) !== true) {
      sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
      return true;
    }
    if (path === CHANGES && req.method === "GET") {
      await changeStream(app, req, res);
      return true;
    }
    try {
      const one = TASK.exec(path);
      const run = RUN_NOW.exec(path);
      if (path === TASKS && req.method === "GET") {
        const projectId = url.searchParams.get("projectId");
        sendJson(res, 200, app.listScheduledTasks(owner, parsedInput(ListScheduledTasksInput, projectId === null ? {} : { projectId })));
      } else if (path === TASKS && req.method === "POST") {
        sendJson(res, 201, await app.scheduleTask(owner, parsedInput(ScheduleTaskInput, await readJsonBody(req))));
      } else if (one !== null && req.method === "PATCH") {
        const body = await readJsonBody(req);
        const fields = typeof body === "object" && body !== null ? body : {};
        sendJson(res, 200, await app.updateScheduledTask(owner, parsedInput(UpdateScheduledTaskInput, { ...fields, scheduledTaskId: decodePathSegment(one[1]!) })));
      } else if (one !== null && req.method === "DELETE") {
        sendJson(res, 200, await app.deleteScheduledTask(owner, parsedInput(ScheduledTaskIdOnlyInput, { scheduledTaskId: decodePathSegment(one[1]!) })));
      } else if (run !== null && req.method === "POST") {
        sendJson(res, 200, await app.runScheduledTaskNow(owner, parsedInput(ScheduledTaskIdOnlyInput, { scheduledTaskId: decodePathSegment(run[1]!) })));
      } else {
        throw new HttpError(405, "method_not_allowed", `${req.method ?? "?"} is not allowed on ${path}`);
      }
      return true;
    } catch (error) {
      if (error instanceof AppError) {
        sendJson(res, statusOf(error), { error: toFailure(error) });
        return true;
      }
      throw error;
    }
  };
}

/** Server-sent events: `changed` after every committed change to a scheduled task (any node's), until the client goes away. */
async function changeStream(app: App, req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
  let feed: StreamHandle | null = null;
  let gone = false;
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  keepAlive.unref();
  const close = () => {
    gone = true;
    feed?.close();
    clearInterval(keepAlive);
  };
  req.on("close", close);
  res.on("close", close);
  feed = await app.followScheduledTaskChanges((change) => res.write(`event: changed\ndata: ${JSON.stringify(change)}\n\n`));
  if (gone) feed.close();
  // Written once the feed is live: a client that read it misses no later change.
  else res.write(": scheduled task changes\n\n");
}

async function webhook(app: App, req: IncomingMessage, res: ServerResponse, scheduledTaskId: string, token: string, log?: (line: string) => void): Promise<void> {
  if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "use POST");
  const body = await readBody(req, app.webhookMaxBodyBytes);
  if (!body.ok) {
    const error =
      body.reason === "too_large"
        ? new HttpError(413, "body_too_large", `webhook body exceeds ${app.webhookMaxBodyBytes} bytes`)
        : new HttpError(400, "unreadable_body", "the request body could not be read");
    sendError(res, error, CLOSE_CONNECTION);
    return;
  }
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  const outcome = await app.receiveWebhook({ scheduledTaskId, token, headers, body: body.bytes });
  switch (outcome.kind) {
    case "not_found":
      sendError(res, new HttpError(404, "not_found", "no webhook at this URL"));
      return;
    case "refused":
      // A bad signature is anyone's noise; a stale or replayed delivery carried a valid one.
      if (outcome.refusal !== "invalid_signature") log?.(`loom: webhook of ${scheduledTaskId} refused (${outcome.refusal}): ${outcome.reason}`);
      sendError(res, new HttpError(REFUSAL_STATUS[outcome.refusal], outcome.refusal, outcome.reason));
      return;
    case "skipped":
      sendJson(res, 202, { status: "skipped", reason: outcome.reason });
      return;
    case "fired":
      sendJson(res, 202, { status: "fired", outcome: outcome.outcome, runId: outcome.runId, threadId: outcome.threadId, reason: outcome.reason });
      return;
    default: {
      const exhaustive: never = outcome;
      return exhaustive;
    }
  }
}
