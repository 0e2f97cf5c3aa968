import pg from "pg";
import type { ClientConfig } from "pg";

export interface NotificationHandlers {
  /** A NOTIFY arrived on the channel, with its payload. */
  readonly onNotify: (payload: string) => void;
  /** LISTEN is in effect (first time or after a reconnect): anything sent while it was not has been missed. */
  readonly onListening: () => void;
  /** The connection failed or dropped; it is retried with backoff. */
  readonly onError: (error: unknown) => void;
}

/** First and longest pause before reconnecting a lost LISTEN connection. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * One dedicated connection that LISTENs on a channel (a pooled connection
 * cannot: it is handed to other queries between uses). When it drops it is
 * reconnected with exponential backoff; the store's polling covers the gap,
 * and `onListening` after each reconnect lets the store read what it missed.
 */
export class PostgresNotifications {
  private current: pg.Client | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private started = false;
  private closed = false;

  constructor(
    private readonly config: ClientConfig,
    private readonly channel: string,
    private readonly handlers: NotificationHandlers,
  ) {}

  /** Connect in the background. Idempotent. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.connect().catch((error: unknown) => this.handlers.onError(error));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const client = this.current;
    this.current = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    this.current = client;
    client.on("notification", (message) => {
      if (message.channel === this.channel) this.handlers.onNotify(message.payload ?? "");
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("the LISTEN connection ended")));
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.current !== client) return;
    this.failures = 0;
    this.handlers.onListening();
  }

  /** Called once or more per failed client (error, then end); acts only for the current one. */
  private lost(client: pg.Client, error: unknown): void {
    if (this.current !== client || this.closed) return;
    this.current = null;
    client.end().catch(() => undefined);
    this.handlers.onError(error);
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** this.failures);
    this.failures += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed) this.connect().catch((error: unknown) => this.handlers.onError(error));
    }, delay);
    this.retryTimer.unref();
  }
}
