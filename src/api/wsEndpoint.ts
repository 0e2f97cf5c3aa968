import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { App } from "../app/app.js";
import { ownerCaller } from "../app/caller.js";
import { WS_PATH, WsCloseCode } from "../contracts/wire/messages.js";
import { type WsTicketBook, isOwnerRequest } from "./ownerAuth.js";
import { WsConnection } from "./wsConnection.js";
import { wsMethodTable } from "./wsMethods.js";

export interface WsEndpointOptions {
  readonly app: App;
  /** SHA-256 of the owner token. */
  readonly ownerTokenHash: Buffer;
  readonly tickets: WsTicketBook;
  /** The origins a browser may connect from: the server's own (read at each upgrade, once the port is known). */
  readonly allowedOrigins: () => readonly string[];
  /** Server pings this often; a peer that has not answered the previous ping by then is dropped. Default 15 s. */
  readonly heartbeatMs?: number;
  /** Default 8 MiB. */
  readonly maxBufferedBytes?: number;
  /** Offer permessage-deflate to clients that ask for it (config `wire.compression`). Default true. */
  readonly compression?: boolean;
  readonly log?: (line: string) => void;
}

export interface WsEndpoint {
  /** The HTTP server's `upgrade` listener. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Connections open now. */
  readonly size: number;
  /** Close every connection (going away; dropped after a short grace) and stop the heartbeat. */
  close(): Promise<void>;
}

/** How long a closing connection may take to answer the close frame before it is dropped. */
const CLOSE_GRACE_MS = 500;

/**
 * permessage-deflate with bounded memory per connection: an 8 KiB window
 * (13 bits) each way, a small zlib memLevel, messages under 1 KiB sent as
 * they are, and at most 4 compressions at once.
 */
const PER_MESSAGE_DEFLATE = {
  serverMaxWindowBits: 13,
  clientMaxWindowBits: 13,
  zlibDeflateOptions: { memLevel: 4, windowBits: 13 },
  zlibInflateOptions: { windowBits: 13 },
  threshold: 1024,
  concurrencyLimit: 4,
} as const;

/** Largest accepted client message. */
const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** Refuse an upgrade with a plain HTTP answer before any WebSocket data flows. */
function refuse(socket: Duplex, status: 401 | 403 | 404, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  const reason = status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : "Not Found";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      (status === 401 ? "WWW-Authenticate: Bearer\r\n" : "") +
      `\r\n${body}`,
  );
}

/**
 * The WebSocket endpoint on the HTTP server's port (path /api/ws). An upgrade
 * is accepted only from the owner: a program sends `Authorization: Bearer
 * <owner-token>`; a browser, which cannot set that header, opens
 * `/api/ws?ticket=<ticket>` with a single-use ticket from POST /api/ws-ticket.
 * A request that carries an Origin (a browser) must come from the server's
 * own origin. Refusals are HTTP answers (401, 403) before any WebSocket data.
 */
export function createWsEndpoint(options: WsEndpointOptions): WsEndpoint {
  const log = options.log ?? (() => undefined);
  const methods = wsMethodTable(options.app);
  const caller = ownerCaller(options.app.environmentId);
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD_BYTES, clientTracking: false, perMessageDeflate: options.compression === false ? false : PER_MESSAGE_DEFLATE });
  const connections = new Map<WebSocket, { alive: boolean; connection: WsConnection }>();
  const heartbeat = setInterval(() => {
    for (const [socket, peer] of connections) {
      if (!peer.alive) {
        // No pong since the last ping: the peer is gone (or hopelessly stalled).
        peer.connection.shutdown();
        socket.terminate();
        connections.delete(socket);
        continue;
      }
      peer.alive = false;
      socket.ping();
    }
  }, options.heartbeatMs ?? 15_000);
  heartbeat.unref();

  return {
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? "/", "http://loom.invalid");
      if (url.pathname !== WS_PATH) {
        refuse(socket, 404, "not_found", `no WebSocket endpoint at ${url.pathname}; use ${WS_PATH}`);
        return;
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !options.allowedOrigins().includes(origin)) {
        refuse(socket, 403, "forbidden_origin", `origin ${origin} may not open this server's WebSocket`);
        return;
      }
      const ticket = url.searchParams.get("ticket");
      const authorized = isOwnerRequest(req, options.ownerTokenHash) || (ticket !== null && options.tickets.redeem(ticket));
      if (!authorized) {
        refuse(socket, 401, "unauthorized", "missing or invalid bearer token or ticket");
        return;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        const connection = new WsConnection(ws, { methods, caller, maxBufferedBytes: options.maxBufferedBytes ?? 8 * 1024 * 1024, log });
        const peer = { alive: true, connection };
        connections.set(ws, peer);
        ws.on("pong", () => (peer.alive = true));
        // Any message proves the peer is there (browsers answer pings too, but cannot send them).
        ws.on("message", () => (peer.alive = true));
        ws.on("close", () => connections.delete(ws));
      });
    },
    get size() {
      return connections.size;
    },
    async close() {
      clearInterval(heartbeat);
      const closing = [...connections].map(([socket, peer]) => {
        peer.connection.shutdown();
        return new Promise<void>((resolve) => {
          if (socket.readyState === socket.CLOSED) return resolve();
          const timer = setTimeout(() => {
            socket.terminate();
            resolve();
          }, CLOSE_GRACE_MS);
          socket.once("close", () => {
            clearTimeout(timer);
            resolve();
          });
          socket.close(WsCloseCode.goingAway, "server shutting down");
        });
      });
      connections.clear();
      await Promise.all(closing);
      server.close();
    },
  };
}
