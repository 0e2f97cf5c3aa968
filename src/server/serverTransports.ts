import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type GuestSocket, createGuestSocket } from "../api/guestSocket.js";
import { guestRoutes } from "../api/guestRoutes.js";
import { guestShareRoutes } from "../api/guestShareRoutes.js";
import { nodeRoutes } from "../api/nodeRoutes.js";
import { WsTicketBook } from "../api/ownerAuth.js";
import { orchestrationRoutes, sha256 } from "../api/routes.js";
import { scheduleRoutes } from "../api/scheduleRoutes.js";
import { secretRoutes } from "../api/secretRoutes.js";
import { uiRoutes } from "../api/uiRoutes.js";
import { UiSessionBook, isUiSessionRequest } from "../api/uiSessions.js";
import { type WsEndpoint, createWsEndpoint } from "../api/wsEndpoint.js";
import { workspaceRoutes } from "../api/workspaceRoutes.js";
import { followIdleSessions } from "../app/idleSessions.js";
import { answerUncompressed, isLoopbackAddress } from "../http/compression.js";
import { HttpError, type RouteHandler, sendError } from "../http/http.js";
import { staticFiles } from "../http/staticFiles.js";
import { type McpRoute, createMcpRoute } from "../mcp/httpEndpoint.js";
import { backgroundToolkit } from "../mcp/toolkits/background/tools.js";
import { delegationToolkit } from "../mcp/toolkits/delegation/tools.js";
import { diagnosticsToolkit } from "../mcp/toolkits/diagnostics/tools.js";
import { discoveryToolkit } from "../mcp/toolkits/discovery/tools.js";
import { schedulesToolkit } from "../mcp/toolkits/schedules/tools.js";
import { searchToolkit } from "../mcp/toolkits/search/tools.js";
import { secretsToolkit } from "../mcp/toolkits/secrets/tools.js";
import { threadControlToolkit } from "../mcp/toolkits/threadControl/tools.js";
import { threadToolkit } from "../mcp/toolkits/threads/tools.js";
import { workflowsToolkit } from "../mcp/toolkits/workflows/tools.js";
import { mergeQueueToolkit } from "../mcp/toolkits/mergeQueue/tools.js";
import type { Subscription } from "../store/eventStore.js";
import { LOOM_VERSION } from "../version.js";
import type { LoomServerOptions } from "./serverOptions.js";
import { nodesReport } from "./nodesReport.js";
import type { ServerApp } from "./serverApp.js";
import type { ServerBackend } from "./serverBackend.js";
import type { ServerConfig } from "./serverConfig.js";
import type { ServerEngine } from "./serverEngine.js";
import type { StateDir } from "./stateDir.js";

/** dist/ui, two folders up from this module in src/server/ and dist/server/ alike. */
const BUILT_UI_DIR = fileURLToPath(new URL("../../dist/ui/", import.meta.url));

/** Where the server listens: empty until it does, read by whatever hands its URLs out (agents' MCP URL, webhook URLs, origins). */
export class ServerAddress {
  url = "";
  /** The origins a browser may call from: the server's own URL, and its localhost spellings on loopback. */
  origins: readonly string[] = [];

  get mcpUrl(): string {
    return this.url === "" ? "" : `${this.url}/mcp`;
  }
}

/** The MCP endpoint, the HTTP routes and the WebSocket endpoint, on one HTTP server that does not listen yet. */
export interface ServerTransports {
  readonly mcp: McpRoute;
  readonly ws: WsEndpoint;
  /** Guests' live views (/g/<token>/ws). */
  readonly guestSocket: GuestSocket;
  readonly http: Server;
  /** Releases an agent's MCP sessions once its run ended with nothing queued. */
  readonly idleSessions: Subscription;
  /** Listen on host:port (0: a free one) and fill `address`. */
  listen(host: string, port: number): Promise<void>;
}

/** Every transport over the app's operations: none of them is handed an engine object. */
export function buildTransports(dir: StateDir, options: LoomServerOptions, parts: TransportParts, address: ServerAddress): ServerTransports {
  const { setup, base, engine, app: served } = parts;
  const { app } = served;
  const { log } = setup;
  const ownerTokenHash = sha256(base.ownerToken);
  const toolkits = [
    threadToolkit(app),
    delegationToolkit(app),
    threadControlToolkit(app),
    searchToolkit(app),
    backgroundToolkit(app),
    secretsToolkit(app),
    schedulesToolkit(app),
    workflowsToolkit(app),
    mergeQueueToolkit(app),
    ...(options.diagnosticsTools === true ? [diagnosticsToolkit] : []),
  ];
  // loom_tools describes and calls the other tools: how a core-profile agent reaches the ones its listing leaves out.
  const mcp = createMcpRoute({ credentials: base.credentials, toolkits: [...toolkits, discoveryToolkit(toolkits, log)], tasks: app, version: LOOM_VERSION, log });
  // A run that ended with nothing queued releases its agent's MCP sessions (and their sockets) at once.
  const idleSessions = followIdleSessions(engine.orchestrator, (providerSessionId) => {
    mcp.closeForProviderSession(providerSessionId).catch((error: unknown) => log(`loom: closing MCP sessions of ${providerSessionId} failed: ${String(error)}`));
  });
  const tickets = new WsTicketBook();
  const origins = () => address.origins;
  const uiSessions = new UiSessionBook({ file: join(dir.root, "ui-sessions.json") });
  const signedIn = (req: IncomingMessage) => isUiSessionRequest(req, uiSessions, origins);
  const { backend, nodeId, credentials } = base;
  const routes: RouteHandler[] = [
    // Before orchestrationRoutes, which answers every other /api/ path with 404.
    secretRoutes({ app, ownerTokenHash }),
    guestShareRoutes({ app, ownerTokenHash, alsoOwner: signedIn }),
    // A guest's page and its routes (docs/guest-share.md): nothing under /g/ reads the owner's credentials.
    guestRoutes({ app, allowedOrigins: origins }),
    workspaceRoutes({ app, ownerTokenHash, alsoOwner: signedIn }),
    uiRoutes({ app, ownerTokenHash, sessions: uiSessions, allowedOrigins: origins, baseUrl: () => address.url }),
    scheduleRoutes({ app, ownerTokenHash, alsoOwner: signedIn, log }),
    nodeRoutes({
      ownerTokenHash,
      report: () => nodesReport({ self: nodeId, leaseMs: setup.config.nodes.leaseMs, nodes: backend.nodes, credentials, store: backend.store, now: Date.now() }),
    }),
    orchestrationRoutes({ app, ownerTokenHash, version: LOOM_VERSION, tickets, alsoOwner: signedIn }),
    mcp.route,
    // Last: the web UI's files (docs/ui.md) at every path the routes above leave.
    staticFiles({ root: options.uiDir ?? BUILT_UI_DIR, reserved: (path) => path.startsWith("/api/") || path === "/mcp" || path.startsWith("/mcp/") || path.startsWith("/g/") }),
  ];
  const { compression } = setup.config.wire;
  const guestSocket = createGuestSocket({ app, allowedOrigins: origins });
  const ws = createWsEndpoint({ app, ownerTokenHash, tickets, allowedOrigins: origins, heartbeatMs: options.wsHeartbeatMs, compression: compression !== false, log });
  // wire.compression false, or "remote" for a client on this machine (its bytes cost nothing, compressing them costs CPU):
  // every route answers identity whatever the request accepts, and the WebSocket offers no extension.
  const uncompressed = (req: IncomingMessage): boolean => compression === false || (compression === "remote" && isLoopbackAddress(req.socket.remoteAddress));
  const http = createServer((req, res) => {
    if (uncompressed(req)) answerUncompressed(req);
    void handle(routes, req, res, new URL(req.url ?? "/", "http://loom.invalid"), log);
  });
  http.on("upgrade", (req, socket, head) => {
    if (uncompressed(req)) delete req.headers["sec-websocket-extensions"];
    if (guestSocket.handleUpgrade(req, socket, head)) return;
    ws.handleUpgrade(req, socket, head);
  });
  return {
    mcp,
    ws,
    guestSocket,
    http,
    idleSessions,
    listen: async (host, port) => {
      await listen(http, host, port);
      const bound = (http.address() as AddressInfo).port;
      address.url = `http://${host.includes(":") ? `[${host}]` : host}:${bound}`;
      address.origins = ownOrigins(host, bound, address.url);
    },
  };
}

/** The steps before the transports that they are built on. */
export interface TransportParts {
  readonly setup: ServerConfig;
  readonly base: ServerBackend;
  readonly engine: ServerEngine;
  readonly app: ServerApp;
}

async function handle(routes: readonly RouteHandler[], req: IncomingMessage, res: ServerResponse, url: URL, log: (line: string) => void): Promise<void> {
  try {
    for (const route of routes) {
      if (await route(req, res, url)) return;
    }
    throw new HttpError(404, "not_found", `no route for ${req.method ?? "?"} ${url.pathname}`);
  } catch (error) {
    if (res.headersSent) {
      res.end();
      return;
    }
    if (error instanceof HttpError) {
      sendError(res, error);
      return;
    }
    log(`loom: internal error on ${req.method ?? "?"} ${url.pathname}: ${(error as Error).stack ?? String(error)}`);
    sendError(res, new HttpError(500, "internal_error", "internal server error"));
  }
}

/** The origins a browser may open the WebSocket from: the server's own URL, and its localhost spelling on loopback. */
function ownOrigins(host: string, port: number, url: string): string[] {
  const loopback = host === "127.0.0.1" || host === "::1" || host === "localhost";
  return loopback ? [url, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`].filter((o, i, all) => all.indexOf(o) === i) : [url];
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
