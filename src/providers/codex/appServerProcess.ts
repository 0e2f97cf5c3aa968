import { JsonRpcProcess } from "../kit/jsonRpcProcess.js";
import type { ProcessExit, StdioProcessSpec } from "../kit/stdioProcess.js";
import type { ClientMethod, ParamsOf, RequestId, ServerNotification, ServerRequest } from "./protocol.js";
import { METHOD_NOT_FOUND } from "./protocol.js";

export { StdioRpcError as AppServerError, StdioRpcErrorCode as AppServerErrorCode } from "../kit/stdioRpcError.js";
export type { ProcessExit as AppServerExit } from "../kit/stdioProcess.js";

/**
 * The transport concern of the codex driver: one `codex app-server` child
 * process speaking JSON-RPC over stdio (the kit's JsonRpcProcess), typed by
 * the generated protocol: the client's methods and their params, the
 * server's notifications and requests (approvals). A server request the
 * listener throws on is answered method-not-found. It knows nothing of Loom.
 */

/** Who hears what the server says: its session (or, for a warm process, the pool). */
export interface AppServerListener {
  /** Called synchronously, in arrival order. */
  readonly onNotification: (notification: ServerNotification) => void;
  /** A server→client request; answer it with `respond` or `respondError`. */
  readonly onRequest: (request: ServerRequest) => void;
  /** Called once, after every pending request was rejected. */
  readonly onExit: (exit: ProcessExit) => void;
}

export interface AppServerProcessOptions extends StdioProcessSpec, AppServerListener {
  readonly requestTimeoutMs: number;
}

export class AppServerProcess {
  private readonly rpc: JsonRpcProcess;
  private listener: AppServerListener;

  /** Spawns at once; a spawn failure arrives through `onExit` (and rejects every request). */
  constructor(options: AppServerProcessOptions) {
    this.listener = { onNotification: options.onNotification, onRequest: options.onRequest, onExit: options.onExit };
    this.rpc = new JsonRpcProcess({
      ...options,
      label: "codex app-server",
      onNotification: (message) => this.listener.onNotification(message as unknown as ServerNotification),
      onRequest: (message) => this.dispatchRequest(message as unknown as ServerRequest),
      onExit: (exit) => this.listener.onExit(exit),
    });
  }

  /**
   * Hand a running process to another listener, with more strings to keep out
   * of error messages: a warm process (started ahead of need) becomes one
   * session's when it is bound to a thread.
   */
  handTo(listener: AppServerListener, secrets: readonly string[]): void {
    this.listener = listener;
    this.rpc.addSecrets(secrets);
  }

  get pid(): number | undefined {
    return this.rpc.pid;
  }

  get isRunning(): boolean {
    return this.rpc.isRunning;
  }

  /** The last lines the server wrote to stderr, without colour codes or secrets. */
  stderrTail(maxChars = 1_000): string {
    return this.rpc.stderrTail(maxChars);
  }

  /** Call `method`; resolves with its result, rejects with AppServerError. */
  request<M extends ClientMethod, R = unknown>(method: M, params: ParamsOf<M>, timeoutMs?: number): Promise<R> {
    return this.rpc.request<R>(method, params, timeoutMs);
  }

  notify(method: "initialized"): void {
    this.rpc.notify(method);
  }

  /** Answer a server→client request. */
  respond(id: RequestId, result: unknown): void {
    this.rpc.respond(id, result);
  }

  respondError(id: RequestId, code: number, message: string): void {
    this.rpc.respondError(id, code, message);
  }

  /**
   * End the process: close stdin (app-server exits on EOF), then SIGTERM the
   * process group after `graceMs`, then SIGKILL. Resolves once it exited.
   */
  close(graceMs = 1_000): Promise<ProcessExit> {
    return this.rpc.close(graceMs);
  }

  private dispatchRequest(request: ServerRequest): void {
    try {
      this.listener.onRequest(request);
    } catch (error) {
      this.respondError(request.id, METHOD_NOT_FOUND, error instanceof Error ? error.message : String(error));
    }
  }
}
