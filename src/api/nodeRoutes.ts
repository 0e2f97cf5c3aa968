import type { IncomingMessage } from "node:http";
import { HttpError, type RouteHandler, sendError, sendJson } from "../http/http.js";
import { isOwnerRequest } from "./ownerAuth.js";

/** One node as `GET /api/nodes` and `loom nodes` show it. */
export interface NodeSummary {
  readonly nodeId: string;
  readonly url: string;
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
  readonly heartbeatAt: string;
  /** Milliseconds since the node's last heartbeat, by the answering node's clock. */
  readonly heartbeatAgeMs: number;
  /** live: beating; stopped: shut down cleanly; lost: silent past the lease, its work taken over. */
  readonly status: "live" | "stopped" | "lost";
  readonly takenOverBy: string | null;
  /** Provider sessions whose agent process runs on the node. */
  readonly sessions: readonly { readonly threadId: string; readonly providerSessionId: string }[];
  /** Outbox effects the node holds a lease on. */
  readonly leases: readonly { readonly effectId: string; readonly kind: string; readonly threadId: string; readonly leaseExpiresAt: string | null }[];
}

export interface NodesReport {
  /** The node that answered. */
  readonly self: string;
  readonly leaseMs: number;
  readonly nodes: readonly NodeSummary[];
}

export interface NodeRouteOptions {
  readonly ownerTokenHash: Buffer;
  readonly report: () => Promise<NodesReport>;
}

/** `GET /api/nodes` (owner): the nodes sharing this log, their heartbeat age, sessions and leases. */
export function nodeRoutes(options: NodeRouteOptions): RouteHandler {
  return async (req: IncomingMessage, res, url) => {
    if (url.pathname !== "/api/nodes") return false;
    if (!isOwnerRequest(req, options.ownerTokenHash)) {
      sendError(res, new HttpError(401, "unauthorized", "missing or invalid bearer token"), { "www-authenticate": "Bearer" });
      return true;
    }
    if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "use GET");
    sendJson(res, 200, await options.report());
    return true;
  };
}
