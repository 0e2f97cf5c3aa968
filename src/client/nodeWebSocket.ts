import WebSocket from "ws";
import type { WebSocketFactory, WebSocketLike } from "./loomWsClient.js";

/**
 * Sockets for programs (Node): the `ws` package with the owner token as the
 * Authorization bearer header. `origin` is for tests that play a browser.
 */
export function bearerWebSocket(token: string, options: { readonly origin?: string } = {}): WebSocketFactory {
  return (url) =>
    new WebSocket(url, {
      headers: { authorization: `Bearer ${token}`, ...(options.origin === undefined ? {} : { origin: options.origin }) },
    }) as unknown as WebSocketLike;
}

/**
 * Sockets the way a browser must open them: no Authorization header, a
 * single-use ticket from POST /api/ws-ticket in the query, and the page's
 * Origin. `ticket` fetches a fresh ticket for every (re)connection.
 */
export function ticketWebSocket(ticket: () => Promise<string>, options: { readonly origin?: string } = {}): WebSocketFactory {
  return async (url) =>
    new WebSocket(`${url}?ticket=${encodeURIComponent(await ticket())}`, {
      headers: options.origin === undefined ? {} : { origin: options.origin },
    }) as unknown as WebSocketLike;
}
