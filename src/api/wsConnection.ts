import type { WebSocket } from "ws";
import type { Caller } from "../app/caller.js";
import { AppError, isUnexpectedFailure, toFailure } from "../app/errors.js";
import type { StreamHandle, StreamSink } from "../app/orchestration/subscriptions.js";
import { LruBodyMemory, dedupeThreadUpdate } from "../contracts/wire/dedupedBodies.js";
import { IdInterner } from "../contracts/wire/idTable.js";
import { ClientMessageSchema, type ServerMessage, type WireOptions, WsCloseCode } from "../contracts/wire/messages.js";
import { WS_METHOD_KIND, WS_METHOD_PARAMS, type WsMethod, type WsRequestMethod, type WsSubscriptionMethod } from "../contracts/wire/methods.js";
import type { ThreadStreamUpdate } from "../contracts/wire/projections.js";
import { eventStreamFrame, isEventUpdate } from "./streamFrames.js";
import { compactRecord } from "./wireCompaction.js";
import type { RequestHandler, SubscriptionHandler, WsMethodTable } from "./wsMethods.js";

export interface WsConnectionOptions {
  readonly methods: WsMethodTable;
  readonly caller: Caller;
  /** A client this far behind in reading is disconnected (close 1013) and must resume. */
  readonly maxBufferedBytes: number;
  readonly log: (line: string) => void;
}

interface OpenSubscription {
  handle: StreamHandle | null;
  closed: boolean;
  readonly interner: IdInterner | null;
}

function isMethod(name: string): name is WsMethod {
  return Object.hasOwn(WS_METHOD_KIND, name);
}

/**
 * One WebSocket connection speaking the wire protocol (contracts/wire/messages.ts).
 * Transport only: it parses messages, validates params against the
 * method's schema, calls the method table, and shapes answers (compaction,
 * the wire Failure for anything thrown). Subscriptions are tagged with the
 * id of the request that opened them and close with the connection.
 */
export class WsConnection {
  private readonly subscriptions = new Map<string, OpenSubscription>();
  /** Request ids in flight or subscribed: a second request with a busy id is refused. */
  private readonly busy = new Set<string>();
  /** Live body dedupe memory of this connection (LIVE_DEDUPE_MEMORY bodies). */
  private readonly bodies = new LruBodyMemory();
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly options: WsConnectionOptions,
  ) {
    socket.on("message", (data, isBinary) => this.onMessage(isBinary ? null : (data as Buffer).toString("utf8")));
    socket.on("close", () => this.shutdown());
    socket.on("error", () => this.shutdown());
  }

  /** Close every subscription; the socket is closing or closed. */
  shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const subscription of this.subscriptions.values()) {
      subscription.closed = true;
      subscription.handle?.close();
    }
    this.subscriptions.clear();
    this.busy.clear();
  }

  private onMessage(text: string | null): void {
    let raw: unknown;
    try {
      raw = text === null ? undefined : JSON.parse(text);
    } catch {
      raw = undefined;
    }
    const parsed = ClientMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const id = typeof (raw as { id?: unknown } | undefined)?.id === "string" ? (raw as { id: string }).id : null;
      this.send({ type: "error", id, error: toFailure(new AppError("invalid_request", `not a protocol message: ${text === null ? "binary frames are not accepted" : parsed.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ")}`)) });
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case "ping":
        this.send(message.id === undefined ? { type: "pong" } : { type: "pong", id: message.id });
        return;
      case "unsubscribe":
        this.unsubscribe(message.id);
        return;
      case "request":
        this.request(message.id, message.method, message.params, message.options ?? {});
        return;
      default: {
        const unexpected: never = message;
        return unexpected;
      }
    }
  }

  private request(id: string, method: string, rawParams: unknown, options: WireOptions): void {
    if (this.busy.has(id)) {
      this.send({ type: "error", id, error: toFailure(new AppError("invalid_request", `request id ${id} is already in use on this connection`)) });
      return;
    }
    if (!isMethod(method)) {
      this.send({ type: "error", id, error: toFailure(new AppError("invalid_request", `unknown method ${method}`)) });
      return;
    }
    const params = WS_METHOD_PARAMS[method].safeParse(rawParams ?? {});
    if (!params.success) {
      this.send({ type: "error", id, error: toFailure(params.error) });
      return;
    }
    this.busy.add(id);
    if (WS_METHOD_KIND[method] === "request") void this.answer(id, method as WsRequestMethod, params.data, options);
    else void this.subscribe(id, method as WsSubscriptionMethod, params.data, options);
  }

  private async answer(id: string, method: WsRequestMethod, params: unknown, options: WireOptions): Promise<void> {
    try {
      const handler = this.options.methods[method] as RequestHandler<WsRequestMethod>;
      const result = await handler(params as never, this.options.caller);
      const shaped = compactRecord(result, options);
      if (options.compactIds === true) {
        const { ids, record } = shaped as { ids: (string | number)[]; record: unknown };
        this.send({ type: "response", id, result: record, ids });
      } else {
        this.send({ type: "response", id, result: shaped });
      }
    } catch (error) {
      this.fail(id, method, error);
    } finally {
      this.busy.delete(id);
    }
  }

  private async subscribe(id: string, method: WsSubscriptionMethod, params: unknown, options: WireOptions): Promise<void> {
    const subscription: OpenSubscription = { handle: null, closed: false, interner: options.compactIds === true ? new IdInterner() : null };
    this.subscriptions.set(id, subscription);
    const dedupe = options.dedupeBodies === true && method === "orchestration.subscribeThread";
    const sink: StreamSink<unknown> = {
      next: (update) => {
        if (subscription.closed) return;
        const deduped = dedupe ? dedupeThreadUpdate(update as ThreadStreamUpdate, this.bodies, false) : update;
        if (subscription.interner === null) {
          if (!dedupe && isEventUpdate(update)) this.sendText(eventStreamFrame(id, update));
          else this.send({ type: "stream", id, update: deduped });
        } else {
          const { value, added } = subscription.interner.intern(deduped);
          this.send(added.length === 0 ? { type: "stream", id, update: value } : { type: "stream", id, update: value, ids: added });
        }
      },
      complete: () => {
        if (subscription.closed) return;
        this.end(id, subscription);
        this.send({ type: "complete", id });
      },
      fail: (error) => {
        if (subscription.closed) return;
        this.end(id, subscription);
        this.fail(id, method, error);
      },
    };
    try {
      const handler = this.options.methods[method] as SubscriptionHandler<WsSubscriptionMethod>;
      const handle = await handler(params as never, this.options.caller, sink);
      if (subscription.closed) handle.close();
      else subscription.handle = handle;
    } catch (error) {
      if (subscription.closed) return;
      this.end(id, subscription);
      this.fail(id, method, error);
    }
  }

  private unsubscribe(id: string): void {
    const subscription = this.subscriptions.get(id);
    if (subscription === undefined) {
      this.send({ type: "error", id, error: toFailure(new AppError("invalid_request", `no subscription ${id} is open on this connection`)) });
      return;
    }
    this.end(id, subscription);
    this.send({ type: "complete", id });
  }

  private end(id: string, subscription: OpenSubscription): void {
    subscription.closed = true;
    subscription.handle?.close();
    this.subscriptions.delete(id);
    this.busy.delete(id);
  }

  private fail(id: string, method: string, error: unknown): void {
    if (isUnexpectedFailure(error)) this.options.log(`loom: ${method} failed: ${(error as Error).stack ?? String(error)}`);
    this.send({ type: "error", id, error: toFailure(error) });
  }

  private send(message: ServerMessage): void {
    this.sendText(JSON.stringify(message));
  }

  private sendText(text: string): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(text);
    if (this.socket.bufferedAmount > this.options.maxBufferedBytes) {
      this.options.log(`loom: closing a WebSocket client that is ${this.socket.bufferedAmount} bytes behind`);
      this.shutdown();
      this.socket.close(WsCloseCode.tryAgainLater, "too far behind; reconnect and resume");
    }
  }
}
