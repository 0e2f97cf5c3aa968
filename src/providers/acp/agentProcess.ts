import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import type { ClientConnection, RequestPermissionRequest, RequestPermissionResponse, SessionNotification } from "@agentclientprotocol/sdk/unstable";
import { RequestError, client, ndJsonStream } from "@agentclientprotocol/sdk/unstable";

/**
 * The transport concern of the ACP driver: one agent child process speaking
 * ACP (newline-delimited JSON-RPC) over stdio, through the official SDK's
 * client() builder. It routes the agent's session/update notifications,
 * permission requests and extension requests to callbacks, times requests
 * out, keeps the tail of stderr (secrets removed) for error messages, and
 * ends the whole process group on close. It knows nothing of Loom.
 */

export const AgentProcessErrorCode = {
  /** The executable could not be started (missing, not executable). */
  spawnFailed: "spawn_failed",
  /** The agent answered with a JSON-RPC error. */
  rpc: "rpc_error",
  /** No answer within the request timeout. */
  timeout: "timeout",
  /** The process exited (or was closed) before answering. */
  closed: "closed",
} as const;
export type AgentProcessErrorCode = (typeof AgentProcessErrorCode)[keyof typeof AgentProcessErrorCode];

export class AgentProcessError extends Error {
  constructor(
    readonly code: AgentProcessErrorCode,
    message: string,
    /** The JSON-RPC error code, for `rpc_error`. */
    readonly rpcCode: number | null = null,
  ) {
    super(message);
    this.name = "AgentProcessError";
  }
}

export interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError: string | null;
}

export interface AgentProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Strings that never appear in an error message or log line (tokens, keys). */
  readonly secrets: readonly string[];
  readonly onUpdate: (notification: SessionNotification) => void;
  /** Resolves with the agent's answer; may wait for a person. */
  readonly onPermission: (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  /** Extension methods (a flavor's) the client answers; anything else is method-not-found. */
  readonly extensionMethods: readonly string[];
  readonly onExtension: (method: string, params: unknown) => Promise<unknown>;
  /** Called once, after the connection was closed. */
  readonly onExit: (exit: AgentExit) => void;
}

const STDERR_TAIL_CHARS = 4_000;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export class AgentProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly connection: ClientConnection;
  private stderr = "";
  private exitInfo: AgentExit | null = null;
  private readonly exited: Promise<AgentExit>;

  /** Spawns at once; a spawn failure arrives through `onExit` (and rejects every request). */
  constructor(private readonly options: AgentProcessOptions) {
    this.child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so close() also ends what an npm launcher started.
      detached: process.platform !== "win32",
    });
    this.child.stdin.on("error", () => undefined); // EPIPE after exit; "close" reports it
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    let app = client({ name: "loom" })
      .onNotification("session/update", ({ params }) => options.onUpdate(params))
      .onRequest("session/request_permission", ({ params }) => options.onPermission(params));
    for (const method of options.extensionMethods) {
      app = app.onRequest(method, (params: unknown) => params, ({ params }) => options.onExtension(method, params));
    }
    // Anything else (fs/*, terminal/*: not advertised) is method-not-found, the SDK's default.
    this.connection = app.connect(ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout) as ReadableStream<Uint8Array>));
    this.exited = new Promise((resolve) => {
      let spawnError: string | null = null;
      this.child.once("error", (error) => {
        spawnError = error.message;
        if (this.child.pid === undefined) this.finish({ code: null, signal: null, spawnError }, resolve);
      });
      // "close", not "exit": by then stdout is drained, so a last notification is not lost.
      this.child.once("close", (code, signal) => this.finish({ code, signal, spawnError }, resolve));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return this.exitInfo === null;
  }

  /** How the process ended, or null while it runs. */
  get exit(): AgentExit | null {
    return this.exitInfo;
  }

  /** Resolves with how the process ended, or null if it still runs after `timeoutMs`. */
  async whenExited(timeoutMs: number): Promise<AgentExit | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The last lines the agent wrote to stderr, without colour codes or secrets. */
  stderrTail(maxChars = 1_000): string {
    return this.redact(this.stderr.replace(ANSI, "")).trim().slice(-maxChars);
  }

  /** Call an agent method; rejects with AgentProcessError. `timeoutMs` null waits as long as the call runs (session/prompt). */
  async request<R>(method: string, params: unknown, timeoutMs: number | null): Promise<R> {
    if (this.exitInfo !== null) throw this.closedError(method);
    const cancel = new AbortController();
    const timer = timeoutMs === null ? null : setTimeout(() => cancel.abort(), timeoutMs);
    timer?.unref();
    try {
      return await this.connection.agent.request<R>(method, params, { cancellationSignal: cancel.signal, stopWaitingOnCancel: true });
    } catch (error) {
      if (cancel.signal.aborted) throw new AgentProcessError(AgentProcessErrorCode.timeout, `the agent did not answer ${method} within ${String(timeoutMs)} ms`);
      if (this.exitInfo !== null || this.connection.signal.aborted) throw this.closedError(method);
      if (error instanceof RequestError) throw new AgentProcessError(AgentProcessErrorCode.rpc, `${method} failed: ${this.redact(error.message)}`, error.code);
      throw new AgentProcessError(AgentProcessErrorCode.closed, `${method} failed: ${this.redact(error instanceof Error ? error.message : String(error))}`);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /** Send a notification (session/cancel); a closed connection drops it. */
  async notify(method: string, params: unknown): Promise<void> {
    if (this.exitInfo !== null) return;
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
  async close(graceMs = 1_000): Promise<AgentExit> {
    if (this.exitInfo === null) {
      this.connection.close();
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
    if (this.exitInfo === null) this.signalGroup(signal);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      if (process.platform === "win32") this.child.kill(signal);
      else process.kill(-pid, signal);
    } catch {
      if (this.exitInfo === null) this.child.kill(signal);
    }
  }

  private finish(exit: AgentExit, resolve: (exit: AgentExit) => void): void {
    if (this.exitInfo !== null) return;
    this.exitInfo = exit;
    this.connection.close(new Error(this.describeExit(exit)));
    // A process that exited may leave children in its group; they go with it.
    this.signalGroup("SIGKILL");
    resolve(exit);
    this.options.onExit(exit);
  }

  private closedError(method: string): AgentProcessError {
    const exit = this.exitInfo;
    if (exit?.spawnError != null) return new AgentProcessError(AgentProcessErrorCode.spawnFailed, `${method}: could not start ${this.options.command}: ${exit.spawnError}`);
    return new AgentProcessError(AgentProcessErrorCode.closed, `${method}: ${exit === null ? "the ACP connection closed" : this.describeExit(exit)}`);
  }

  describeExit(exit: AgentExit): string {
    if (exit.spawnError !== null) return `could not start ${this.options.command}: ${exit.spawnError}`;
    return `the agent exited (${exit.signal ?? `code ${String(exit.code)}`})`;
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.options.secrets) {
      if (secret.length > 0) out = out.split(secret).join("[redacted]");
    }
    return out;
  }
}
