import type { Failure } from "../contracts/failures.js";
import { LruBodyMemory } from "../contracts/wire/dedupedBodies.js";
import type { IdValue } from "../contracts/wire/idTable.js";
import { WS_PATH, type WireOptions } from "../contracts/wire/messages.js";
import type { WsParams, WsRequestMethod, WsResults, WsSubscriptionMethod, WsUpdates } from "../contracts/wire/methods.js";
import { CONNECTION_LOST, WireError } from "./wireErrors.js";
import { StreamExpander, expandRecord } from "./wireExpansion.js";

/** The part of a WebSocket the client uses: the browser's and the `ws` package's both fit. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/** Opens a socket to `url` (ws:// or wss://), authenticated the way its environment can (nodeWebSocket.ts). */
export type WebSocketFactory = (url: string) => WebSocketLike | Promise<WebSocketLike>;

export interface LoomWsClientOptions {
  /** The server's base URL (http://127.0.0.1:PORT). */
  readonly url: string;
  readonly connect: WebSocketFactory;
  /** Reconnect after an unexpected close, resuming subscriptions. Default true. */
  readonly reconnect?: boolean;
  /** Backoff between reconnect tries: doubles from min to max. Default 100 ms to 5 s. */
  readonly reconnectDelayMs?: { readonly min: number; readonly max: number };
  /** Application ping interval; no pong within one interval means a dead server (reconnect). Default 15 s. */
  readonly heartbeatMs?: number;
  /** Told of every (re)connection and loss. */
  readonly onConnectionChange?: (state: "open" | "reconnecting" | "closed") => void;
}

export interface SubscriptionHandlers<U> {
  next(update: U): void;
  /** The subscription failed (it is over). */
  error?(error: WireError): void;
  /** The subscription ended normally (its source ended, or it was closed). */
  complete?(): void;
}

export interface ClientSubscription {
  /** Unsubscribe; `complete` is called once the server confirms. Idempotent. */
  close(): void;
}

interface PendingRequest {
  readonly options: WireOptions;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface ActiveSubscription {
  readonly method: WsSubscriptionMethod;
  params: Record<string, unknown>;
  readonly options: WireOptions;
  readonly handlers: SubscriptionHandlers<unknown>;
  /** The wire id of its current request (a new one after each reconnect). */
  wireId: string;
  expander: StreamExpander;
  /** Closed by the caller: updates still arriving feed the expansion state but are not delivered. */
  closing: boolean;
  /** Where to resume: the last log sequence or output offset seen. */
  resume: { afterSequence?: number; fromOffset?: number };
}

const OPEN = 1;

/**
 * The typed WebSocket client of the wire protocol (docs/wire.md), for the
 * CLI, the UI and tests. Requests and subscriptions are typed from the
 * contracts; compaction is expanded before anything reaches the caller. After
 * a dropped connection it reconnects and resumes each subscription from the
 * last sequence (or output offset) it delivered, so nothing is missed or
 * repeated while the server's log still has those events.
 */
export class LoomWsClient {
  private socket: WebSocketLike | null = null;
  private nextId = 1;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly subscriptions = new Map<string, ActiveSubscription>();
  private bodies = new LruBodyMemory();
  private closedByUser = false;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private awaitingPong = false;
  private reconnectDelay: number;

  private constructor(private readonly options: LoomWsClientOptions) {
    this.reconnectDelay = options.reconnectDelayMs?.min ?? 100;
  }

  /** Connect; rejects when the first connection fails (a refused upgrade, no server). */
  static async connect(options: LoomWsClientOptions): Promise<LoomWsClient> {
    const client = new LoomWsClient(options);
    await client.open();
    return client;
  }

  static wsUrl(baseUrl: string): string {
    return `${baseUrl.replace(/^http/, "ws").replace(/\/$/, "")}${WS_PATH}`;
  }

  async request<M extends WsRequestMethod>(method: M, params: WsParams<M>, options: WireOptions = {}): Promise<WsResults[M]> {
    const id = String(this.nextId++);
    return new Promise<WsResults[M]>((resolve, reject) => {
      this.pending.set(id, { options, resolve: resolve, reject });
      if (!this.sendMessage({ type: "request", id, method, params, ...(hasOptions(options) ? { options } : {}) })) {
        this.pending.delete(id);
        reject(new WireError(CONNECTION_LOST));
      }
    });
  }

  subscribe<M extends WsSubscriptionMethod>(method: M, params: WsParams<M>, handlers: SubscriptionHandlers<WsUpdates[M]>, options: WireOptions = {}): ClientSubscription {
    const key = String(this.nextId++);
    const subscription: ActiveSubscription = {
      method,
      params: { ...(params as Record<string, unknown>) },
      options,
      handlers: handlers,
      wireId: key,
      expander: this.expanderFor(method, options),
      closing: false,
      resume: {},
    };
    this.subscriptions.set(key, subscription);
    this.start(subscription);
    return {
      close: () => {
        if (subscription.closing) return;
        subscription.closing = true;
        if (!this.sendMessage({ type: "unsubscribe", id: subscription.wireId })) this.finish(subscription, null);
      },
    };
  }

  /** Close the connection; pending requests fail and subscriptions complete. */
  async close(): Promise<void> {
    this.closedByUser = true;
    this.stopHeartbeat();
    const socket = this.socket;
    this.socket = null;
    this.failPending();
    for (const subscription of [...this.subscriptions.values()]) this.finish(subscription, null);
    if (socket !== null && socket.readyState === OPEN) {
      await new Promise<void>((resolve) => {
        socket.onclose = () => resolve();
        socket.close(1000, "client closing");
        setTimeout(resolve, 1_000);
      });
    }
    this.options.onConnectionChange?.("closed");
  }

  private expanderFor(method: WsSubscriptionMethod, options: WireOptions): StreamExpander {
    return new StreamExpander(options, options.dedupeBodies === true && method === "orchestration.subscribeThread" ? this.bodies : null);
  }

  private start(subscription: ActiveSubscription): void {
    const params = { ...subscription.params, ...subscription.resume };
    this.sendMessage({ type: "request", id: subscription.wireId, method: subscription.method, params, ...(hasOptions(subscription.options) ? { options: subscription.options } : {}) });
  }

  private async open(): Promise<void> {
    const socket = await this.options.connect(LoomWsClient.wsUrl(this.options.url));
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = (event) => reject(new Error(`WebSocket connection to ${this.options.url} failed: ${describe(event)}`));
      socket.onclose = (event) => reject(new Error(`WebSocket connection to ${this.options.url} closed (${event.code})`));
    });
    this.socket = socket;
    this.bodies = new LruBodyMemory();
    this.reconnectDelay = this.options.reconnectDelayMs?.min ?? 100;
    socket.onmessage = (event) => this.onMessage(typeof event.data === "string" ? event.data : String(event.data));
    socket.onclose = () => this.onLost(socket);
    socket.onerror = () => undefined;
    this.startHeartbeat();
    this.options.onConnectionChange?.("open");
  }

  private onLost(socket: WebSocketLike): void {
    if (this.socket !== socket) return;
    this.socket = null;
    this.stopHeartbeat();
    this.failPending();
    if (this.closedByUser) return;
    if (this.options.reconnect === false) {
      for (const subscription of [...this.subscriptions.values()]) this.finish(subscription, new WireError(CONNECTION_LOST));
      this.options.onConnectionChange?.("closed");
      return;
    }
    this.options.onConnectionChange?.("reconnecting");
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(delay * 2, this.options.reconnectDelayMs?.max ?? 5_000);
    setTimeout(() => {
      if (this.closedByUser) return;
      this.open().then(
        () => {
          for (const subscription of this.subscriptions.values()) {
            if (subscription.closing) {
              this.finish(subscription, null);
              continue;
            }
            // A fresh wire id and fresh expansion state: the new connection starts new tables.
            subscription.wireId = String(this.nextId++);
            subscription.expander = this.expanderFor(subscription.method, subscription.options);
            this.start(subscription);
          }
        },
        () => this.scheduleReconnect(),
      );
    }, delay);
  }

  private onMessage(text: string): void {
    this.awaitingPong = false;
    let message: { type?: string; id?: string | null; result?: unknown; ids?: IdValue[]; update?: unknown; error?: Failure };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    const id = message.id ?? "";
    switch (message.type) {
      case "response": {
        const pending = this.pending.get(id);
        if (pending === undefined) return;
        this.pending.delete(id);
        try {
          pending.resolve(expandRecord(message.result, pending.options, message.ids ?? (pending.options.compactIds === true ? [] : undefined)));
        } catch (error) {
          pending.reject(error instanceof Error ? error : new Error(String(error)));
        }
        return;
      }
      case "error": {
        const failure = message.error!;
        const pending = this.pending.get(id);
        if (pending !== undefined) {
          this.pending.delete(id);
          pending.reject(new WireError(failure));
          return;
        }
        const subscription = this.byWireId(id);
        if (subscription !== undefined) this.finish(subscription, subscription.closing ? null : new WireError(failure));
        return;
      }
      case "stream": {
        const subscription = this.byWireId(id);
        if (subscription === undefined) return;
        // Expanded even when closing: the body memory must see every update the server sent.
        const update = subscription.expander.expand(message.update, message.ids);
        if (subscription.closing) return;
        trackResume(subscription, update);
        subscription.handlers.next(update);
        return;
      }
      case "complete": {
        const subscription = this.byWireId(id);
        if (subscription !== undefined) this.finish(subscription, null);
        return;
      }
      default:
        return;
    }
  }

  private byWireId(id: string): ActiveSubscription | undefined {
    for (const subscription of this.subscriptions.values()) if (subscription.wireId === id) return subscription;
    return undefined;
  }

  private finish(subscription: ActiveSubscription, error: WireError | null): void {
    for (const [key, candidate] of this.subscriptions) if (candidate === subscription) this.subscriptions.delete(key);
    if (error === null) subscription.handlers.complete?.();
    else subscription.handlers.error?.(error);
  }

  private failPending(): void {
    for (const pending of this.pending.values()) pending.reject(new WireError(CONNECTION_LOST));
    this.pending.clear();
  }

  private sendMessage(message: Record<string, unknown>): boolean {
    const socket = this.socket;
    if (socket === null || socket.readyState !== OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  private startHeartbeat(): void {
    const every = this.options.heartbeatMs ?? 15_000;
    this.awaitingPong = false;
    this.heartbeat = setInterval(() => {
      const socket = this.socket;
      if (socket === null) return;
      if (this.awaitingPong) {
        // Nothing heard for a whole interval: treat the server as gone.
        socket.close(4000, "no pong");
        this.onLost(socket);
        return;
      }
      this.awaitingPong = true;
      this.sendMessage({ type: "ping" });
    }, every);
    (this.heartbeat as { unref?: () => void }).unref?.();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== null) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}

/** Remember where a subscription is, so a reconnect resumes from there. */
function trackResume(subscription: ActiveSubscription, update: unknown): void {
  const u = update as { kind?: string; snapshot?: { snapshotSequence?: number }; event?: { sequence?: number }; sequence?: number; afterSequence?: number; offset?: number; text?: string };
  switch (u.kind) {
    case "snapshot":
      subscription.resume.afterSequence = u.snapshot?.snapshotSequence;
      return;
    case "resumed":
      subscription.resume.afterSequence = u.afterSequence;
      return;
    case "event":
      subscription.resume.afterSequence = u.event?.sequence;
      return;
    case "upsert":
    case "remove":
      subscription.resume.afterSequence = u.sequence;
      return;
    case "tail":
    case "chunk":
      subscription.resume.fromOffset = (u.offset ?? 0) + (u.text?.length ?? 0);
      return;
    default:
      return;
  }
}

function hasOptions(options: WireOptions): boolean {
  return options.compactIds === true || options.dedupeBodies === true;
}

function describe(event: unknown): string {
  const message = (event as { message?: unknown; error?: { message?: unknown } } | null)?.message ?? (event as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === "string" ? message : "connection error";
}
