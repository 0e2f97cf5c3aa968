import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { ClientMethod, IncomingMessage, ParamsOf, RequestId, RpcErrorBody, ServerNotification, ServerRequest } from "./protocol.js";
import { METHOD_NOT_FOUND } from "./protocol.js";

/**
 * The transport concern of the codex driver: one `codex app-server` child
 * process speaking line-delimited JSON-RPC over stdio. It correlates
 * responses with requests, hands server→client requests (approvals) and
 * notifications to callbacks, keeps the tail of stderr for error messages,
 * and kills the whole process group on close. It knows nothing of Loom.
 */

export const AppServerErrorCode = {
  /** The executable could not be started (missing, not executable). */
  spawnFailed: "spawn_failed",
  /** The server answered the request with a JSON-RPC error. */
  rpc: "rpc_error",
  /** No answer within the request timeout. */
  timeout: "timeout",
  /** The process exited (or was closed) before answering. */
  closed: "closed",
} as const;
export type AppServerErrorCode = (typeof AppServerErrorCode)[keyof typeof AppServerErrorCode];

export class AppServerError extends Error {
  constructor(
    readonly code: AppServerErrorCode,
    message: string,
    /** The JSON-RPC error code, for `rpc_error`. */
    readonly rpcCode: number | null = null,
  ) {
    super(message);
    this.name = "AppServerError";
  }
}

export interface AppServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError: string | null;
}

/** Who hears what the server says: its session (or, for a warm process, the pool). */
export interface AppServerListener {
  /** Called synchronously, in arrival order. */
  readonly onNotification: (notification: ServerNotification) => void;
  /** A server→client request; answer it with `respond` or `respondError`. */
  readonly onRequest: (request: ServerRequest) => void;
  /** Called once, after every pending request was rejected. */
  readonly onExit: (exit: AppServerExit) => void;
}

export interface AppServerProcessOptions extends AppServerListener {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly requestTimeoutMs: number;
  /** Strings that must never appear in an error message or log line (tokens, keys). */
  readonly secrets?: readonly string[];
}

interface Pending {
  readonly method: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: AppServerError) => void;
  readonly timer: NodeJS.Timeout;
}

const STDERR_TAIL_CHARS = 4_000;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export class AppServerProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<RequestId, Pending>();
  private nextId = 1;
  private stderr = "";
  private exitInfo: AppServerExit | null = null;
  private readonly exited: Promise<AppServerExit>;
  private listener: AppServerListener;
  private readonly secrets: string[];

  /** Spawns at once; a spawn failure arrives through `onExit` (and rejects every request). */
  constructor(private readonly options: AppServerProcessOptions) {
    this.listener = { onNotification: options.onNotification, onRequest: options.onRequest, onExit: options.onExit };
    this.secrets = [...(options.secrets ?? [])];
    this.child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so close() also ends the native binary behind the npm wrapper.
      detached: process.platform !== "win32",
    });
    this.exited = new Promise((resolve) => {
      let spawnError: string | null = null;
      this.child.once("error", (error) => {
        spawnError = error.message;
        // A process that never started may emit no "close" of its own.
        if (this.child.pid === undefined) this.finish({ code: null, signal: null, spawnError }, resolve);
      });
      // "close", not "exit": by then stdout and stderr are drained, so a last notification is not lost.
      this.child.once("close", (code, signal) => this.finish({ code, signal, spawnError }, resolve));
    });
    this.child.stdin.on("error", () => undefined); // EPIPE after exit; "exit" reports it
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    const lines = createInterface({ input: this.child.stdout });
    lines.on("line", (line) => this.receive(line));
  }

  /**
   * Hand a running process to another listener, with more strings to keep out
   * of error messages: a warm process (started ahead of need) becomes one
   * session's when it is bound to a thread.
   */
  handTo(listener: AppServerListener, secrets: readonly string[]): void {
    this.listener = listener;
    this.secrets.push(...secrets);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return this.exitInfo === null;
  }

  /** The last lines the server wrote to stderr, without colour codes or secrets. */
  stderrTail(maxChars = 1_000): string {
    return this.redact(this.stderr.replace(ANSI, "")).trim().slice(-maxChars);
  }

  /** Call `method`; resolves with its result, rejects with AppServerError. */
  request<M extends ClientMethod, R = unknown>(method: M, params: ParamsOf<M>, timeoutMs = this.options.requestTimeoutMs): Promise<R> {
    if (this.exitInfo !== null) {
      return Promise.reject(new AppServerError(AppServerErrorCode.closed, `codex app-server has exited; ${method} was not sent`));
    }
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AppServerError(AppServerErrorCode.timeout, `codex app-server did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.pending.set(id, { method, resolve: resolve as (value: unknown) => void, reject, timer });
      this.write({ id, method, params });
    });
  }

  notify(method: "initialized"): void {
    this.write({ method });
  }

  /** Answer a server→client request. */
  respond(id: RequestId, result: unknown): void {
    this.write({ id, result });
  }

  respondError(id: RequestId, code: number, message: string): void {
    this.write({ id, error: { code, message } });
  }

  /**
   * End the process: close stdin (app-server exits on EOF), then SIGTERM the
   * process group after `graceMs`, then SIGKILL. Resolves once it exited.
   */
  async close(graceMs = 1_000): Promise<AppServerExit> {
    if (this.exitInfo === null) {
      this.child.stdin.end();
      const term = setTimeout(() => this.signal("SIGTERM"), graceMs);
      const kill = setTimeout(() => this.signal("SIGKILL"), graceMs * 3);
      try {
        return await this.exited;
      } finally {
        clearTimeout(term);
        clearTimeout(kill);
      }
    }
    return this.exited;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exitInfo !== null) return;
    try {
      if (process.platform === "win32") this.child.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      this.child.kill(signal);
    }
  }

  private write(message: Record<string, unknown>): void {
    if (this.exitInfo !== null || !this.child.stdin.writable) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  private receive(line: string): void {
    if (line.trim() === "") return;
    let message: IncomingMessage;
    try {
      message = JSON.parse(line) as IncomingMessage;
    } catch {
      this.stderr = `${this.stderr}\n[stdout, not JSON] ${line.slice(0, 200)}`.slice(-STDERR_TAIL_CHARS);
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      this.dispatchRequest(message as ServerRequest);
    } else if (message.method !== undefined) {
      this.listener.onNotification(message as ServerNotification);
    } else if (message.id !== undefined) {
      this.settle(message.id, message.result, message.error);
    }
  }

  private dispatchRequest(request: ServerRequest): void {
    try {
      this.listener.onRequest(request);
    } catch (error) {
      this.respondError(request.id, METHOD_NOT_FOUND, error instanceof Error ? error.message : String(error));
    }
  }

  private settle(id: RequestId, result: unknown, error: RpcErrorBody | undefined): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (error !== undefined) {
      pending.reject(new AppServerError(AppServerErrorCode.rpc, `${pending.method} failed: ${this.redact(error.message)}`, error.code));
    } else {
      pending.resolve(result);
    }
  }

  private finish(exit: AppServerExit, resolve: (exit: AppServerExit) => void): void {
    if (this.exitInfo !== null) return;
    this.exitInfo = exit;
    const reason =
      exit.spawnError !== null
        ? `could not start ${this.options.command}: ${exit.spawnError}`
        : `codex app-server exited (${exit.signal ?? `code ${String(exit.code)}`})`;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new AppServerError(exit.spawnError !== null ? AppServerErrorCode.spawnFailed : AppServerErrorCode.closed, `${pending.method}: ${reason}`));
      this.pending.delete(id);
    }
    resolve(exit);
    this.listener.onExit(exit);
  }

  private redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (secret.length > 0) out = out.split(secret).join("[redacted]");
    }
    return out;
  }
}
