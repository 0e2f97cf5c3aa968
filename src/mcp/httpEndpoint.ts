import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest, isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { bearerToken, sendJson } from "../http/http.js";
import { compressWrittenAnswer } from "../http/writtenAnswerCompression.js";
import type { RouteHandler } from "../http/http.js";
import type { CredentialRejection, McpInvocationScope } from "./credentialRegistry.js";
import type { McpCredentials } from "./storedCredentials.js";
import { type McpBodyResult, readMcpBody, sendJsonRpcError } from "./httpBody.js";
import { screenToolCalls } from "./toolArguments.js";
import { type McpSession, McpSessionTable, OWNER_IDENTITY, SessionCloseReason, identityOf } from "./mcpSessions.js";
import type { McpToolkit } from "./toolkit.js";
import { buildToolCatalog, createToolServer } from "./toolServer.js";
import type { McpTaskOperations } from "./toolTasks.js";

/**
 * Loom's MCP endpoint (spec 000, Transport And Authentication): Streamable
 * HTTP with stateful sessions, a bearer credential on every request, and the
 * SDK's low-level `Server` per session so Loom owns tool listing, validation
 * and failure shaping. Tokens and Authorization headers are never logged.
 */

export interface McpRouteOptions {
  readonly credentials: McpCredentials;
  readonly toolkits: readonly McpToolkit[];
  /** The app operations that answer tasks/*; without them no tasks capability is advertised (docs/mcp.md, "Tasks"). */
  readonly tasks?: McpTaskOperations;
  /** The provider-visible server key (spec 000): "t3-code". */
  readonly serverName?: string;
  readonly version: string;
  readonly log?: (line: string) => void;
  readonly path?: string;
  /** A session with no request for this long is closed (default 30 min). */
  readonly sessionIdleTtlMs?: number;
  /** How often ended and idle sessions are swept (default 60 s; 0 turns the timer off). */
  readonly sweepIntervalMs?: number;
  readonly now?: () => number;
}

export interface McpRoute {
  readonly route: RouteHandler;
  /** Open sessions. */
  readonly sessionCount: number;
  /** Close sessions whose credential ended and idle ones now; returns how many. */
  sweep(): Promise<number>;
  /**
   * Close the MCP sessions of a provider session whose run ended with nothing
   * queued: their streams and sockets go now, not at the idle sweep. The
   * credential stays valid; the agent opens a new session on its next call.
   */
  closeForProviderSession(providerSessionId: string): Promise<number>;
  /** Close every session; later requests get 503. */
  close(): Promise<void>;
}

export const DEFAULT_MCP_SERVER_NAME = "t3-code";
export const DEFAULT_MCP_PATH = "/mcp";
export const DEFAULT_SESSION_IDLE_TTL_MS = 30 * 60_000;
export const DEFAULT_SESSION_SWEEP_INTERVAL_MS = 60_000;

const UNAUTHORIZED_MESSAGES: { readonly [R in CredentialRejection | "missing"]: string } = {
  missing: "missing bearer token: send Authorization: Bearer <token>",
  unknown: "unknown bearer token",
  expired: "bearer token expired",
  revoked: "bearer token revoked",
};

export function createMcpRoute(options: McpRouteOptions): McpRoute {
  const { credentials } = options;
  const log = options.log ?? (() => undefined);
  const path = options.path ?? DEFAULT_MCP_PATH;
  const serverName = options.serverName ?? DEFAULT_MCP_SERVER_NAME;
  const catalog = buildToolCatalog(options.toolkits);
  const sessions = new McpSessionTable({ idleTtlMs: options.sessionIdleTtlMs ?? DEFAULT_SESSION_IDLE_TTL_MS, now: options.now ?? Date.now, log });
  const credentialActive = async (session: McpSession): Promise<boolean> => session.identity === OWNER_IDENTITY || (await credentials.isActive(session.identity));
  let closed = false;

  const sweep = (): Promise<number> => sessions.sweep(credentialActive);
  const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SESSION_SWEEP_INTERVAL_MS;
  const timer = sweepIntervalMs > 0 ? setInterval(() => void sweep().catch((error: Error) => log(`mcp: session sweep failed: ${error.message}`)), sweepIntervalMs) : null;
  timer?.unref();

  /** Answer a POST that opens a session (an initialize request). */
  async function openSession(scope: McpInvocationScope, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = randomUUID();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.add(session);
        log(`mcp: session ${id} opened for ${session.identity}`);
      },
    });
    const server = createToolServer({
      catalog,
      serverName,
      version: options.version,
      log,
      scope: () => session.scope,
      responseSignal: (requestId) => session.responseAborts.get(requestId)?.signal,
      ...(options.tasks === undefined ? {} : { tasks: options.tasks }),
    });
    const session: McpSession = { id, identity: identityOf(scope), scope, transport, server, lastSeenAt: 0, activeRequests: 0, responseAborts: new Map() };
    await server.connect(transport);
    res.once("close", sessions.begin(session));
    compressWrittenAnswer(req, res);
    await transport.handleRequest(req, res, body);
    if (sessions.get(id) === undefined) {
      // The SDK refused the initialize request: nothing refers to this server.
      await server.close();
    } else if (closed) {
      await sessions.close(session, SessionCloseReason.shutdown);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = headerValue(req, "mcp-session-id");
    const token = bearerToken(req);
    const resolution = token === null ? null : await credentials.resolve(token);
    if (resolution === null || !resolution.ok) {
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      // Close the session only when its own credential has ended, so a stranger's bad token cannot end it.
      if (session !== undefined && !(await credentialActive(session))) await sessions.close(session, SessionCloseReason.credentialEnded);
      sendUnauthorized(res, resolution === null ? "missing" : resolution.reason);
      return;
    }
    const scope = resolution.scope;
    const method = req.method ?? "";
    if (method !== "POST" && method !== "GET" && method !== "DELETE") {
      sendJsonRpcError(res, 405, -32000, "Method not allowed.", null, { allow: "GET, POST, DELETE" });
      return;
    }
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (session === undefined || session.identity !== identityOf(scope)) {
        // Another credential's session is reported exactly like a missing one.
        sendJsonRpcError(res, 404, -32001, "Session not found");
        return;
      }
      session.scope = scope;
      res.once("close", sessions.begin(session));
      let body: unknown;
      if (method === "POST") {
        const read = await readMcpBody(req);
        if (!read.ok) return sendBodyError(res, read);
        body = screenToolCalls(read.value);
        armResponseAborts(session, body, res);
        // The SDK writes the answer (JSON or a stream of the request's own events); the long-lived GET stream stays as it is.
        compressWrittenAnswer(req, res);
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (method !== "POST") {
      sendJsonRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
      return;
    }
    const read = await readMcpBody(req);
    if (!read.ok) return sendBodyError(res, read);
    const messages: unknown[] = Array.isArray(read.value) ? read.value : [read.value];
    if (messages.some((message) => isInitializeRequest(message))) {
      await openSession(scope, req, res, read.value);
      return;
    }
    const single = messages.length === 1 && isJSONRPCRequest(messages[0]) ? messages[0] : undefined;
    if (single?.method === "server/discover") {
      // Newer clients probe with server/discover and fall back to initialize on Method not found.
      sendJsonRpcError(res, 200, -32601, "Method not found: server/discover (use initialize)", single.id);
      return;
    }
    sendJsonRpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required; open a session with initialize", single?.id ?? null);
  }

  const route: RouteHandler = async (req, res, url) => {
    if (url.pathname !== path) return false;
    if (closed) {
      sendJson(res, 503, { error: { code: "unavailable", message: "the MCP endpoint is shutting down" } });
      return true;
    }
    try {
      await handle(req, res);
    } catch (error) {
      log(`mcp: internal error on ${req.method ?? "?"} ${path}: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, "Internal error");
      else res.end();
    }
    return true;
  };

  return {
    route,
    get sessionCount() {
      return sessions.size;
    },
    sweep,
    closeForProviderSession: (providerSessionId) => sessions.closeForProviderSession(providerSessionId, SessionCloseReason.runEnded),
    async close() {
      closed = true;
      if (timer !== null) clearInterval(timer);
      await sessions.closeAll();
    },
  };
}

/** 401 with a Bearer challenge; `error="invalid_token"` when a token was presented. The token is never echoed. */
function sendUnauthorized(res: ServerResponse, reason: CredentialRejection | "missing"): void {
  const challenge = reason === "missing" ? "Bearer" : `Bearer error="invalid_token", error_description="${UNAUTHORIZED_MESSAGES[reason]}"`;
  sendJson(res, 401, { error: { code: "unauthorized", message: UNAUTHORIZED_MESSAGES[reason] } }, { "www-authenticate": challenge });
}

function sendBodyError(res: ServerResponse, failure: Extract<McpBodyResult, { ok: false }>): void {
  sendJsonRpcError(res, failure.status, failure.rpcCode, failure.message, null, failure.headers);
}

/**
 * Give each tools/call in the body an abort that fires when its HTTP response
 * closes before finishing (the client went away): the result could no longer
 * be delivered, so the handler should stop.
 */
function armResponseAborts(session: McpSession, body: unknown, res: ServerResponse): void {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const armed = messages.flatMap((message) => {
    if (!isJSONRPCRequest(message) || message.method !== "tools/call") return [];
    const controller = new AbortController();
    session.responseAborts.set(message.id, controller);
    return [{ id: message.id, controller }];
  });
  if (armed.length === 0) return;
  res.once("close", () => {
    for (const { id, controller } of armed) {
      if (!res.writableFinished) controller.abort(new Error("the client closed the response stream"));
      if (session.responseAborts.get(id) === controller) session.responseAborts.delete(id);
    }
  });
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === "" ? undefined : first;
}
