import type { CommandReceipt } from "../contracts/envelopes.js";
import { type Failure, FailureSchema } from "../contracts/failures.js";
import { WS_TICKET_PATH } from "../contracts/wire/messages.js";
import type { BoundedSnapshot, HistoryPage, ShellSnapshot, ThreadProjection, Transcript } from "../contracts/wire/projections.js";
import { WireError } from "./wireErrors.js";
import { expandRecord } from "./wireExpansion.js";

export interface LoomHttpClientOptions {
  /** The server's base URL (http://127.0.0.1:PORT). */
  readonly url: string;
  /** The owner token, sent as the Authorization bearer. */
  readonly token: string;
  readonly fetch?: typeof fetch;
}

/** Query parameters: true becomes "1", false and undefined are left out. */
export type Query = { readonly [name: string]: string | number | boolean | undefined };

export type Compaction = {
  readonly compactIds?: boolean;
  readonly dedupeBodies?: boolean;
};

/**
 * The typed client of the HTTP snapshot endpoints (spec 004 §3.3,
 * docs/wire.md). Compacted answers are expanded before they are returned;
 * a failure answer throws WireError with the server's Failure.
 */
export class LoomHttpClient {
  private readonly fetch: typeof fetch;

  constructor(private readonly options: LoomHttpClientOptions) {
    this.fetch = options.fetch ?? fetch;
  }

  shellSnapshot(query: { readonly includeArchived?: boolean; readonly omitIdleSubagents?: boolean } & Compaction = {}): Promise<ShellSnapshot> {
    return this.get("/api/orchestration/shell-snapshot", query);
  }

  threadSnapshot(threadId: string, query: Compaction = {}): Promise<ThreadProjection> {
    return this.get(`${threadPath(threadId)}/snapshot`, query);
  }

  transcript(threadId: string, query: Pick<Compaction, "compactIds"> = {}): Promise<Transcript> {
    return this.get(`${threadPath(threadId)}/transcript`, query);
  }

  boundedSnapshot(threadId: string, query: { readonly limit?: number } & Compaction = {}): Promise<BoundedSnapshot> {
    return this.get(`${threadPath(threadId)}/bounded-snapshot`, query);
  }

  historyPage(threadId: string, query: { readonly cursor?: string; readonly limit?: number } & Pick<Compaction, "compactIds"> = {}): Promise<HistoryPage> {
    return this.get(`${threadPath(threadId)}/history-page`, query);
  }

  async dispatch(command: { readonly type: string; readonly commandId: string; readonly data: unknown }): Promise<CommandReceipt> {
    const res = await this.send("POST", "/api/orchestration/dispatch", JSON.stringify(command));
    const body = (await res.json());
    if (res.status === 200 || res.status === 409) return body as CommandReceipt;
    throw errorOf(res.status, body);
  }

  /** A single-use WebSocket ticket, for clients that cannot set headers on a WebSocket. */
  async wsTicket(): Promise<string> {
    const res = await this.send("POST", WS_TICKET_PATH);
    const body = (await res.json()) as { ticket?: string };
    if (res.status !== 200 || typeof body.ticket !== "string") throw errorOf(res.status, body);
    return body.ticket;
  }

  /** The raw answer body of a GET, as sent (benchmarks measure its size). */
  async getText(path: string, query: Query = {}): Promise<string> {
    const res = await this.send("GET", withQuery(path, query));
    const text = await res.text();
    if (res.status !== 200) throw errorOf(res.status, safeJson(text));
    return text;
  }

  private async get<T>(path: string, query: Query): Promise<T> {
    const text = await this.getText(path, query);
    return expandRecord<T>(JSON.parse(text), { compactIds: query.compactIds === true, dedupeBodies: query.dedupeBodies === true });
  }

  private send(method: string, path: string, body?: string): Promise<Response> {
    return this.fetch(`${this.options.url.replace(/\/$/, "")}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body }),
    });
  }
}

function threadPath(threadId: string): string {
  return `/api/orchestration/threads/${encodeURIComponent(threadId)}`;
}

function withQuery(path: string, query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === false) continue;
    params.set(key, value === true ? "1" : String(value));
  }
  const text = params.toString();
  return text === "" ? path : `${path}?${text}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function errorOf(status: number, body: unknown): WireError {
  const parsed = FailureSchema.safeParse((body as { error?: unknown } | null)?.error);
  if (parsed.success) return new WireError(parsed.data);
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const failure: Failure = {
    code: status === 404 ? "invalid_request" : "orchestration_error",
    message: `HTTP ${status}${typeof error?.code === "string" ? ` ${error.code}` : ""}: ${typeof error?.message === "string" ? error.message : "no error message"}`,
    retryable: status >= 500,
  };
  return new WireError(failure);
}
