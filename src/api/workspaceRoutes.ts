import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { AppError } from "../app/errors.js";
import { FullThreadDiffInput, MergeIntoParentInput, OpenPullRequestInput, TurnDiffInput, WorktreeThreadIdsInput } from "../contracts/workspaceQueries.js";
import { MergeQueueInput } from "../contracts/tools/mergeQueueTools.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import { HttpError, type RouteHandler, bearerToken, readJsonBody, sendJson } from "../http/http.js";
import { sha256 } from "./routes.js";

/**
 * The workspace routes of the HTTP API (owner only): a thread's checkpoints,
 * turn and full-thread diffs, which threads share a worktree, Loom-managed
 * worktrees (list, prune), and merging a worktree child into its parent.
 * Transport only: it authenticates the owner, reads the inputs from the path,
 * query or body, and calls the app layer. Failures answer `{ error: { code,
 * message, details? } }` (details.files names the files of a conflict).
 */
export interface WorkspaceRouteOptions {
  readonly app: App;
  readonly ownerTokenHash: Buffer;
  /** Also the owner: a request this accepts (the web UI's session cookie, src/api/uiSessions.ts). */
  readonly alsoOwner?: (req: IncomingMessage) => boolean;
}

const THREAD_PATH = /^\/api\/orchestration\/threads\/([^/]+)\/(checkpoints|turn-diff|full-diff|merge-into-parent|merge-queue|pull-request)$/;

function statusOf(error: AppError): number {
  switch (error.code) {
    case "thread_not_found":
    case "run_not_found":
      return 404;
    case "capability_denied":
      return 403;
    case "invalid_request":
      return 400;
    default:
      return 409;
  }
}

/** Query parameters as an input object: numbers where the schema wants them. */
function queryInput(url: URL, numeric: readonly string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, value] of url.searchParams) input[key] = numeric.includes(key) && /^\d+$/.test(value) ? Number(value) : value;
  return input;
}

/** `?includeEnded=false` as the boolean the input takes. */
function includeEndedOf(url: URL): { includeEnded?: boolean } {
  const value = url.searchParams.get("includeEnded");
  return value === null ? {} : { includeEnded: value !== "false" };
}

function parse<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HttpError(400, "invalid_request", `invalid request: ${formatZodIssues(parsed.error)}`);
  return parsed.data;
}

export function workspaceRoutes(options: WorkspaceRouteOptions): RouteHandler {
  const { app } = options;
  const owner = ownerCaller(app.environmentId);
  const isOwner = (req: IncomingMessage): boolean => {
    const token = bearerToken(req);
    return token !== null && timingSafeEqual(sha256(token), options.ownerTokenHash);
  };
  const route = async (req: IncomingMessage, url: URL): Promise<unknown> => {
    const path = url.pathname;
    const method = req.method ?? "GET";
    const thread = THREAD_PATH.exec(path);
    if (thread !== null) {
      const threadId = decodeURIComponent(thread[1]!);
      switch (thread[2]) {
        case "checkpoints":
          expect(method, "GET");
          return app.listThreadCheckpoints(owner, threadId);
        case "turn-diff":
          expect(method, "GET");
          return app.getTurnDiff(owner, parse(TurnDiffInput, { ...queryInput(url, ["maxBytes"]), threadId }));
        case "full-diff":
          expect(method, "GET");
          return app.getFullThreadDiff(owner, parse(FullThreadDiffInput, { ...queryInput(url, ["maxBytes"]), threadId }));
        case "merge-queue": {
          if (method === "GET") return app.mergeQueue(owner, parse(MergeQueueInput, { ...queryInput(url, []), ...includeEndedOf(url), threadId }));
          expect(method, "POST");
          const body = await readJsonBody(req);
          return app.mergeQueue(owner, parse(MergeQueueInput, { ...(typeof body === "object" && body !== null ? body : {}), threadId }));
        }
        case "pull-request": {
          expect(method, "POST");
          const body = await readJsonBody(req);
          return app.openThreadPullRequest(owner, parse(OpenPullRequestInput, { ...(typeof body === "object" && body !== null ? body : {}), threadId }));
        }
        default: {
          expect(method, "POST");
          const body = await readJsonBody(req);
          return app.mergeIntoParent(owner, parse(MergeIntoParentInput, { ...(typeof body === "object" && body !== null ? body : {}), threadId }));
        }
      }
    }
    if (path === "/api/orchestration/worktree-thread-ids") {
      expect(method, "GET");
      return app.getWorktreeThreadIds(owner, parse(WorktreeThreadIdsInput, queryInput(url, [])));
    }
    if (path === "/api/workspaces/merge-queue") {
      expect(method, "GET");
      return app.mergeQueue(owner, parse(MergeQueueInput, { ...queryInput(url, []), ...includeEndedOf(url) }));
    }
    if (path === "/api/workspaces/worktrees") {
      expect(method, "GET");
      return app.listWorktrees(owner);
    }
    if (path === "/api/workspaces/worktrees/prune") {
      expect(method, "POST");
      return app.pruneWorktrees(owner);
    }
    return undefined;
  };
  return async (req, res, url) => {
    const mine = THREAD_PATH.test(url.pathname) || url.pathname === "/api/orchestration/worktree-thread-ids" || url.pathname.startsWith("/api/workspaces/");
    if (!mine) return false;
    if (!isOwner(req) && options.alsoOwner?.(req) !== true) {
      sendJson(res, 401, { error: { code: "unauthorized", message: "missing or invalid bearer token" } }, { "www-authenticate": "Bearer" });
      return true;
    }
    try {
      const body = await route(req, url);
      if (body === undefined) throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${url.pathname}`);
      sendJson(res, 200, body);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      sendJson(res, statusOf(error), { error: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } });
    }
    return true;
  };
}

function expect(method: string, wanted: "GET" | "POST"): void {
  if (method !== wanted) throw new HttpError(405, "method_not_allowed", `use ${wanted}`);
}
