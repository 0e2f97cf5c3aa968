import { StringDecoder } from "node:string_decoder";
import { type ProcessExit, StdioProcess, type StdioProcessSpec } from "./stdioProcess.js";
import { StdioRpcError, StdioRpcErrorCode } from "./stdioRpcError.js";

/**
 * A request/response protocol over one agent process's stdio, one JSON
 * object per LF-terminated line (split on "\n" only: a JSON text may hold
 * U+2028, which a line reader could take for a line break). It correlates
 * answers with requests by id, times requests out, rejects what is pending
 * when the process goes, and hands the peer's requests and notifications to
 * a listener in arrival order. A line that is not a JSON object is kept in
 * the stderr tail. It knows nothing of Loom; the dialect says how a request
 * is written and an incoming record read (JSON-RPC, or pi's own envelope).
 */

export type RpcId = string | number;

/** What a record the peer wrote is. */
export type RpcIncoming =
  | { readonly kind: "result"; readonly id: RpcId; readonly result: unknown }
  | { readonly kind: "error"; readonly id: RpcId; readonly code: number | null; readonly message: string }
  /** The peer asks something of the client; answered with respond() / respondError() or a record of the dialect's. */
  | { readonly kind: "request" }
  | { readonly kind: "notification" };

export interface RpcDialect {
  /** The id and record of the client's `seq`-th request (seq counts from 1). */
  readonly request: (seq: number, method: string, params: unknown) => { readonly id: RpcId; readonly record: Record<string, unknown> };
  readonly classify: (message: Record<string, unknown>) => RpcIncoming;
}

/**
 * JSON-RPC 2.0 framing without the "jsonrpc" member (codex app-server):
 * `{ id, method, params }` is a request, `{ method, params }` a notification,
 * `{ id, result }` or `{ id, error }` an answer.
 */
export const jsonRpcDialect: RpcDialect = {
  request: (seq, method, params) => ({ id: seq, record: { id: seq, method, params } }),
  classify: (message) => {
    const id = message.id;
    const hasId = typeof id === "string" || typeof id === "number";
    if (typeof message.method === "string") return hasId ? { kind: "request" } : { kind: "notification" };
    if (!hasId) return { kind: "notification" };
    const error = message.error as { code?: unknown; message?: unknown } | undefined;
    if (error === undefined) return { kind: "result", id, result: message.result };
    return { kind: "error", id, code: typeof error.code === "number" ? error.code : null, message: typeof error.message === "string" ? error.message : JSON.stringify(error) };
  },
};

/** Who hears what the peer says. */
export interface JsonRpcListener {
  /** Called synchronously, in arrival order. */
  readonly onNotification: (message: Record<string, unknown>) => void;
  readonly onRequest: (message: Record<string, unknown>) => void;
  /** Called once, after every pending request was rejected. */
  readonly onExit: (exit: ProcessExit) => void;
}

export interface JsonRpcProcessOptions extends StdioProcessSpec, JsonRpcListener {
  /** The process as error messages name it ("codex app-server did not answer ..."). */
  readonly label: string;
  readonly requestTimeoutMs: number;
  /** Default: JSON-RPC (jsonRpcDialect). */
  readonly dialect?: RpcDialect;
}

interface Pending {
  readonly method: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: StdioRpcError) => void;
  readonly timer: NodeJS.Timeout;
}

export class JsonRpcProcess {
  private readonly process: StdioProcess;
  private readonly dialect: RpcDialect;
  private readonly pending = new Map<RpcId, Pending>();
  private seq = 0;

  /** Spawns at once; a spawn failure arrives through `onExit` (and rejects every request). */
  constructor(private readonly options: JsonRpcProcessOptions) {
    this.dialect = options.dialect ?? jsonRpcDialect;
    this.process = new StdioProcess({ ...options, onExit: (exit) => this.finish(exit) });
    const decoder = new StringDecoder("utf8");
    let buffer = "";
    this.process.stdout.on("data", (chunk: Buffer) => {
      buffer += decoder.write(chunk);
      let newline: number;
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        this.receive(line);
      }
    });
  }

  /** More strings to keep out of error messages (a warm process bound to a thread gets its token). */
  addSecrets(secrets: readonly string[]): void {
    this.process.addSecrets(secrets);
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get isRunning(): boolean {
    return this.process.isRunning;
  }

  stderrTail(maxChars?: number): string {
    return this.process.stderrTail(maxChars);
  }

  /** Call `method`; resolves with its result, rejects with StdioRpcError. */
  request<R = unknown>(method: string, params: unknown, timeoutMs = this.options.requestTimeoutMs): Promise<R> {
    if (!this.process.isRunning) return Promise.reject(this.process.goneError(method));
    const { id, record } = this.dialect.request(++this.seq, method, params);
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new StdioRpcError(StdioRpcErrorCode.timeout, `${this.options.label} did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { method, resolve: resolve as (value: unknown) => void, reject, timer });
      this.send(record);
    });
  }

  /** A JSON-RPC notification (no answer expected). */
  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { method } : { method, params });
  }

  /** Answer one of the peer's JSON-RPC requests. */
  respond(id: RpcId, result: unknown): void {
    this.send({ id, result });
  }

  respondError(id: RpcId, code: number, message: string): void {
    this.send({ id, error: { code, message } });
  }

  /** Write any record; a process that is gone drops it. */
  send(record: Record<string, unknown>): void {
    this.process.writeLine(JSON.stringify(record));
  }

  /** End the process (StdioProcess.close); pending requests reject closed. */
  close(termAfterMs?: number, killAfterMs?: number): Promise<ProcessExit> {
    return this.process.close(termAfterMs, killAfterMs);
  }

  private receive(line: string): void {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      this.process.note(`\n[stdout, not JSON] ${line.slice(0, 200)}`);
      return;
    }
    const record = message as Record<string, unknown>;
    const incoming = this.dialect.classify(record);
    switch (incoming.kind) {
      case "request":
        return this.options.onRequest(record);
      case "notification":
        return this.options.onNotification(record);
      case "result":
      case "error":
        return this.settle(incoming);
    }
  }

  private settle(answer: Extract<RpcIncoming, { kind: "result" | "error" }>): void {
    const pending = this.pending.get(answer.id);
    if (pending === undefined) return;
    this.pending.delete(answer.id);
    clearTimeout(pending.timer);
    if (answer.kind === "result") pending.resolve(answer.result);
    else pending.reject(new StdioRpcError(StdioRpcErrorCode.rpc, `${pending.method} failed: ${this.process.redact(answer.message)}`, answer.code));
  }

  private finish(exit: ProcessExit): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(this.process.goneError(pending.method, exit));
      this.pending.delete(id);
    }
    this.options.onExit(exit);
  }
}
