import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { bearerToken } from "../http/http.js";

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** True when the request carries the owner token as its bearer token (compared by hash, in constant time). */
export function isOwnerRequest(req: IncomingMessage, ownerTokenHash: Buffer): boolean {
  const token = bearerToken(req);
  return token !== null && timingSafeEqual(sha256(token), ownerTokenHash);
}

export interface WsTicket {
  readonly ticket: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

export interface WsTicketBookOptions {
  /** How long a ticket may wait for its upgrade. Default 30 s. */
  readonly ttlMs?: number;
  /** Outstanding tickets kept at most; the oldest go first. Default 1000. */
  readonly maxOutstanding?: number;
  readonly clock?: () => number;
}

/**
 * Single-use, short-lived WebSocket tickets for browsers, which cannot set an
 * Authorization header on a WebSocket: an owner trades its bearer token for a
 * ticket over authenticated HTTP (POST /api/ws-ticket) and opens the socket
 * with `?ticket=`. Only a hash of each ticket is kept; redeeming it removes it.
 */
export class WsTicketBook {
  private readonly tickets = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly maxOutstanding: number;
  private readonly clock: () => number;

  constructor(options: WsTicketBookOptions = {}) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxOutstanding = options.maxOutstanding ?? 1_000;
    this.clock = options.clock ?? Date.now;
  }

  issue(): WsTicket {
    this.prune();
    const ticket = randomBytes(32).toString("base64url");
    const expiresAt = this.clock() + this.ttlMs;
    this.tickets.set(sha256(ticket).toString("hex"), expiresAt);
    while (this.tickets.size > this.maxOutstanding) this.tickets.delete(this.tickets.keys().next().value!);
    return { ticket, expiresAt };
  }

  /** True once for a ticket this book issued that has not expired; it is spent either way. */
  redeem(ticket: string): boolean {
    const key = sha256(ticket).toString("hex");
    const expiresAt = this.tickets.get(key);
    this.tickets.delete(key);
    return expiresAt !== undefined && expiresAt > this.clock();
  }

  private prune(): void {
    const now = this.clock();
    for (const [key, expiresAt] of this.tickets) if (expiresAt <= now) this.tickets.delete(key);
  }
}
