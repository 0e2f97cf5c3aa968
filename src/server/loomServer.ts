import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HttpError, sendError } from "../api/http.js";
import { type RouteHandler, orchestrationRoutes, sha256 } from "../api/routes.js";
import { Orchestrator } from "../engine/orchestrator.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { LOOM_VERSION } from "../version.js";
import { type StateDir, ensureEnvironmentId, ensureOwnerToken, openStateDir, removeServerInfo, writeServerInfo } from "./stateDir.js";

export interface LoomServerOptions {
  readonly stateDir: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly configPath?: string;
  readonly log?: (line: string) => void;
}

export interface LoomServer {
  readonly url: string;
  readonly mcpUrl: string;
  readonly environmentId: string;
  readonly orchestrator: Orchestrator;
  readonly stateDir: StateDir;
  close(): Promise<void>;
}

/** Open the state dir, replay the log, listen, and publish server.json. */
export async function startLoomServer(options: LoomServerOptions): Promise<LoomServer> {
  const log = options.log ?? (() => undefined);
  const dir = openStateDir(options.stateDir);
  const ownerToken = ensureOwnerToken(dir);
  const environmentId = ensureEnvironmentId(dir);
  const store = SqliteEventStore.open(dir.databasePath);
  const orchestrator = await Orchestrator.open({ store });
  const routes: RouteHandler[] = [
    orchestrationRoutes({ orchestrator, ownerTokenHash: sha256(ownerToken), environmentId, version: LOOM_VERSION }),
  ];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loom.invalid");
    void handle(routes, req, res, url, log);
  });
  const host = options.host ?? "127.0.0.1";
  await listen(server, host, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const mcpUrl = `${url}/mcp`;
  writeServerInfo(dir, { url, mcpUrl, pid: process.pid, environmentId, startedAt: new Date().toISOString() });
  log(`loom ${LOOM_VERSION} listening on ${url} (state: ${dir.root})`);
  let closed = false;
  return {
    url,
    mcpUrl,
    environmentId,
    orchestrator,
    stateDir: dir,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await orchestrator.close();
      removeServerInfo(dir, process.pid);
    },
  };
}

async function handle(routes: readonly RouteHandler[], req: Parameters<RouteHandler>[0], res: Parameters<RouteHandler>[1], url: URL, log: (line: string) => void): Promise<void> {
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

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
