import type { WireOptions } from "../contracts/wire/messages.js";
import type { WsParams, WsSubscriptionMethod, WsUpdates } from "../contracts/wire/methods.js";
import { LoomHttpClient } from "../client/loomHttpClient.js";
import { type LoomWsClientOptions, LoomWsClient } from "../client/loomWsClient.js";
import { bearerWebSocket } from "../client/nodeWebSocket.js";
import type { WireError } from "../client/wireErrors.js";
import type { LoomHarness } from "./loomHarness.js";

/** Wire clients of a running harness, as its owner. */
export function wsClient(h: LoomHarness, options: Partial<LoomWsClientOptions> = {}): Promise<LoomWsClient> {
  return LoomWsClient.connect({ url: h.server.url, connect: bearerWebSocket(h.ownerToken), ...options });
}

export function httpClient(h: LoomHarness): LoomHttpClient {
  return new LoomHttpClient({ url: h.server.url, token: h.ownerToken });
}

/**
 * A subscription that records what it receives, with waits on facts: an
 * update matching a predicate, completion, an error.
 */
export class RecordedStream<U> {
  readonly updates: U[] = [];
  completed = false;
  error: WireError | null = null;
  private readonly waiters: (() => void)[] = [];
  close: () => void = () => undefined;

  static open<M extends WsSubscriptionMethod>(client: LoomWsClient, method: M, params: WsParams<M>, options: WireOptions = {}): RecordedStream<WsUpdates[M]> {
    const stream = new RecordedStream<WsUpdates[M]>();
    const subscription = client.subscribe(
      method,
      params,
      {
        next: (update) => stream.push(update),
        complete: () => stream.end(null),
        error: (error) => stream.end(error),
      },
      options,
    );
    stream.close = () => subscription.close();
    return stream;
  }

  push(update: U): void {
    this.updates.push(update);
    this.wake();
  }

  end(error: WireError | null): void {
    this.completed = error === null;
    this.error = error;
    this.wake();
  }

  /** Resolve with the first update matching `match` (already received or to come). */
  async next(match: (update: U) => boolean, what = "an update", timeoutMs = 10_000): Promise<U> {
    return this.until(() => this.updates.find(match), what, timeoutMs);
  }

  async ended(timeoutMs = 10_000): Promise<void> {
    await this.until(() => this.completed || this.error !== null || undefined, "the stream to end", timeoutMs);
  }

  async failed(timeoutMs = 10_000): Promise<WireError> {
    return this.until(() => this.error ?? undefined, "the stream to fail", timeoutMs);
  }

  async until<T>(probe: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.updates).slice(0, 2_000)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
