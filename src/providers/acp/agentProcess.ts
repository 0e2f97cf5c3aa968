import { Readable, Writable } from "node:stream";
import type { ClientConnection, RequestPermissionRequest, RequestPermissionResponse, SessionNotification } from "@agentclientprotocol/sdk/unstable";
import { RequestError, client, ndJsonStream } from "@agentclientprotocol/sdk/unstable";
import { type ProcessExit, StdioProcess, type StdioProcessSpec } from "../kit/stdioProcess.js";
import { StdioRpcError, StdioRpcErrorCode } from "../kit/stdioRpcError.js";

/**
 * The transport concern of the ACP driver: one agent child process (the
 * kit's StdioProcess) speaking ACP (newline-delimited JSON-RPC) over stdio
 * through the official SDK's client() builder, which frames the stream,
 * correlates answers and routes methods. It hands the agent's session/update
 * notifications, permission requests and extension requests to callbacks,
 * times requests out and ends the whole process group on close. It knows
 * nothing of Loom.
 */

export interface AgentProcessOptions extends StdioProcessSpec {
  readonly onUpdate: (notification: SessionNotification) => void;
  /** Resolves with the agent's answer; may wait for a person. */
  readonly onPermission: (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  /** Extension methods (a flavor's) the client answers; anything else is method-not-found. */
  readonly extensionMethods: readonly string[];
  readonly onExtension: (method: string, params: unknown) => Promise<unknown>;
  /** Called once, after the connection was closed. */
  readonly onExit: (exit: ProcessExit) => void;
}

export class AgentProcess {
  private readonly process: StdioProcess;
  private readonly connection: ClientConnection;

  /** Spawns at once; a spawn failure arrives through `onExit` (and rejects every request). */
  constructor(options: AgentProcessOptions) {
    this.process = new StdioProcess({
      ...options,
      label: "the agent",
      onExit: (exit) => {
        this.connection.close(new Error(this.process.describeExit(exit)));
        options.onExit(exit);
      },
    });
    let app = client({ name: "loom" })
      .onNotification("session/update", ({ params }) => options.onUpdate(params))
      .onRequest("session/request_permission", ({ params }) => options.onPermission(params));
    for (const method of options.extensionMethods) {
      app = app.onRequest(method, (params: unknown) => params, ({ params }) => options.onExtension(method, params));
    }
    // Anything else (fs/*, terminal/*: not advertised) is method-not-found, the SDK's default.
    this.connection = app.connect(ndJsonStream(Writable.toWeb(this.process.stdin), Readable.toWeb(this.process.stdout) as ReadableStream<Uint8Array>));
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get isRunning(): boolean {
    return this.process.isRunning;
  }

  /** How the process ended, or null while it runs. */
  get exit(): ProcessExit | null {
    return this.process.exit;
  }

  /** Resolves with how the process ended, or null if it still runs after `timeoutMs`. */
  whenExited(timeoutMs: number): Promise<ProcessExit | null> {
    return this.process.whenExited(timeoutMs);
  }

  /** The last lines the agent wrote to stderr, without colour codes or secrets. */
  stderrTail(maxChars = 1_000): string {
    return this.process.stderrTail(maxChars);
  }

  describeExit(exit: ProcessExit): string {
    return this.process.describeExit(exit);
  }

  /** Call an agent method; rejects with StdioRpcError. `timeoutMs` null waits as long as the call runs (session/prompt). */
  async request<R>(method: string, params: unknown, timeoutMs: number | null): Promise<R> {
    if (!this.process.isRunning) throw this.process.goneError(method);
    const cancel = new AbortController();
    const timer = timeoutMs === null ? null : setTimeout(() => cancel.abort(), timeoutMs);
    timer?.unref();
    try {
      return await this.connection.agent.request<R>(method, params, { cancellationSignal: cancel.signal, stopWaitingOnCancel: true });
    } catch (error) {
      if (cancel.signal.aborted) throw new StdioRpcError(StdioRpcErrorCode.timeout, `the agent did not answer ${method} within ${String(timeoutMs)} ms`);
      if (!this.process.isRunning || this.connection.signal.aborted) throw this.process.goneError(method);
      if (error instanceof RequestError) throw new StdioRpcError(StdioRpcErrorCode.rpc, `${method} failed: ${this.process.redact(error.message)}`, error.code, error.data);
      throw new StdioRpcError(StdioRpcErrorCode.closed, `${method} failed: ${this.process.redact(error instanceof Error ? error.message : String(error))}`);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /** Send a notification (session/cancel); a closed connection drops it. */
  async notify(method: string, params: unknown): Promise<void> {
    if (!this.process.isRunning) return;
    try {
      await this.connection.agent.notify(method, params);
    } catch {
      // The process is going away; its exit is reported through onExit.
    }
  }

  /**
   * End the process: close the connection and stdin (agents exit on EOF),
   * then SIGTERM the process group after `graceMs`, then SIGKILL. Resolves
   * once it exited.
   */
  close(graceMs = 1_000): Promise<ProcessExit> {
    if (this.process.isRunning) this.connection.close();
    return this.process.close(graceMs);
  }
}
