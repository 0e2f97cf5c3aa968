import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { App } from "../app/app.js";
import { AppError } from "../app/errors.js";
import { GUEST_PATH, GUEST_REFUSED_BODY, guestCookie } from "./guestRoutes.js";

/**
 * The guest's live view over WebSocket at /g/<token>/ws (docs/guest-share.md).
 * The socket is the subscription: it carries `{ kind: "view", view }` after
 * every committed change of the shared thread and `{ kind: "ended" }` when
 * the share closes or expires, then closes. It has no methods: a message
 * from the guest closes it (1008). A bad link or browser gets the same 404
 * as the HTTP routes, before any WebSocket data.
 */
export interface GuestSocket {
  /** True when the upgrade is for a guest path (and was handled). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  close(): void;
}

export function createGuestSocket(options: { readonly app: App; readonly allowedOrigins: () => readonly string[] }): GuestSocket {
  const server = new WebSocketServer({ noServer: true, maxPayload: 1024, clientTracking: false, perMessageDeflate: false });
  const open = new Set<{ socket: WebSocket; close(): void }>();
  const refuse = (socket: Duplex, status: 403 | 404): void => {
    const body = status === 404 ? GUEST_REFUSED_BODY : JSON.stringify({ error: { code: "forbidden_origin", message: "a guest socket must come from this server's page" } });
    socket.end(`HTTP/1.1 ${status} ${status === 404 ? "Not Found" : "Forbidden"}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };
  return {
    handleUpgrade(req, socket, head) {
      const path = new URL(req.url ?? "/", "http://loom.invalid").pathname;
      if (!path.startsWith("/g/")) return false;
      const match = GUEST_PATH.exec(path);
      if (match === null || match[2] !== "ws") {
        refuse(socket, 404);
        return true;
      }
      const origin = req.headers.origin;
      if (origin !== undefined && !options.allowedOrigins().includes(origin)) {
        refuse(socket, 403);
        return true;
      }
      const credentials = { token: match[1]!, browserToken: guestCookie(req) };
      try {
        options.app.readGuestView(credentials);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        refuse(socket, 404);
        return true;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        const send = (update: unknown) => {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(update));
        };
        let follow: { close(): void } | null = null;
        const entry = { socket: ws, close: () => follow?.close() };
        open.add(entry);
        try {
          follow = options.app.followGuestView(credentials, {
            next: (view) => send({ kind: "view", view }),
            end: () => {
              send({ kind: "ended" });
              ws.close(1000, "the share ended");
            },
          });
        } catch {
          send({ kind: "ended" });
          ws.close(1000, "the share ended");
        }
        ws.on("message", () => ws.close(1008, "a guest socket takes no messages"));
        ws.on("close", () => {
          follow?.close();
          open.delete(entry);
        });
      });
      return true;
    },
    close() {
      for (const entry of open) {
        entry.close();
        entry.socket.terminate();
      }
      open.clear();
      server.close();
    },
  };
}
