import { z } from "zod";
import type { Failure } from "../failures.js";
import type { IdValue } from "./idTable.js";

/**
 * The WebSocket protocol (docs/wire.md): JSON text frames. A client sends
 * requests (each with an id of its choosing, unique on the connection while
 * it is open), unsubscribes, and pings; the server answers each request once
 * (`response` or `error`) or, for a subscription, streams `stream` messages
 * tagged with the request id until `complete` or `error`.
 */

/** The path of the WebSocket endpoint on the HTTP server. */
export const WS_PATH = "/api/ws";
/** The HTTP route that trades the owner's bearer token for a single-use WebSocket ticket. */
export const WS_TICKET_PATH = "/api/ws-ticket";

export const RequestIdSchema = z.string().min(1).max(128);

/** Wire compaction, per request (spec 004 §3.3). */
export const WireOptionsSchema = z
  .object({
    /** Intern id / *Id / *Ids fields into an `ids` table (per response, or growing per subscription). */
    compactIds: z.boolean().optional(),
    /** Omit bodies the client already holds (docs/wire.md, "Body dedupe"). */
    dedupeBodies: z.boolean().optional(),
  })
  .strict();
export type WireOptions = z.infer<typeof WireOptionsSchema>;

export const ClientMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("request"), id: RequestIdSchema, method: z.string().min(1), params: z.unknown().optional(), options: WireOptionsSchema.optional() }).strict(),
  z.object({ type: z.literal("unsubscribe"), id: RequestIdSchema }).strict(),
  /** An application-level heartbeat for clients that cannot send WebSocket pings (browsers). */
  z.object({ type: z.literal("ping"), id: RequestIdSchema.optional() }).strict(),
]);
export type ClientMessage = z.infer<typeof ClientMessageSchema>;

export type ServerMessage =
  /** A request method's answer; `ids` is present when the request asked for compactIds. */
  | { readonly type: "response"; readonly id: string; readonly result: unknown; readonly ids?: IdValue[] }
  /** A request failed, or a subscription could not start or ended with a failure. */
  | { readonly type: "error"; readonly id: string | null; readonly error: Failure }
  /** One subscription update; `ids` lists the id-table entries this update adds (compactIds). */
  | { readonly type: "stream"; readonly id: string; readonly update: unknown; readonly ids?: IdValue[] }
  /** The subscription ended normally (its source ended, or the client unsubscribed). */
  | { readonly type: "complete"; readonly id: string }
  | { readonly type: "pong"; readonly id?: string };

/** WebSocket close codes Loom uses. */
export const WsCloseCode = {
  normal: 1000,
  goingAway: 1001,
  /** The client sent something that is not a protocol message. */
  protocolError: 1002,
  /** The client fell too far behind reading; reconnect and resume. */
  tryAgainLater: 1013,
} as const;
export type WsCloseCode = (typeof WsCloseCode)[keyof typeof WsCloseCode];
