import { type ChildProcess, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";

/**
 * The process/transport concern of the pi driver: `pi --mode rpc` over
 * stdin/stdout, one JSON object per LF-terminated line (docs/rpc.md of
 * @mariozechner/pi-coding-agent: split on "\n" only, never on U+2028, so no
 * readline). Commands carry an id and are answered by a `response` record
 * with the same id; everything else is an event or an extension UI request.
 */

export interface PiRpcSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** How long a command may wait for its response. */
  readonly requestTimeoutMs: number;
  /** Never echoed in an error message. */
  readonly secrets: readonly string[];
}

export interface PiExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly spawnError: string | null;
}

export interface PiRpcHandlers {
  /** An event or extension UI request (any record that is not a response). */
  readonly onMessage: (message: Record<string, unknown>) => void;
  readonly onExit: (exit: PiExit) => void;
}

export class PiRpcError extends Error {
  constructor(
    message: string,
    /** "spawn": the executable could not run; "closed": the process is gone; "rejected": pi answered success: false. */
    readonly reason: "spawn" | "closed" | "rejected" | "timeout",
  ) {
    super(message);
    this.name = "PiRpcError";
  }
}

const STDERR_KEEP = 8_000;
const KILL_GRACE_MS = 3_000;

export class PiRpcProcess {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<string, { resolve: (data: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private stderr = "";
  private ids = 0;
  private exit: PiExit | null = null;
  private readonly exited: Promise<PiExit>;

  constructor(
    private readonly spec: PiRpcSpec,
    private readonly handlers: PiRpcHandlers,
  ) {
    let resolveExit: (exit: PiExit) => void = () => undefined;
    this.exited = new Promise((resolve) => (resolveExit = resolve));
    this.child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env: spec.env, stdio: ["pipe", "pipe", "pipe"], windowsHide: true });
    const decoder = new StringDecoder("utf8");
    let buffer = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      buffer += decoder.write(chunk);
      let newline: number;
      while ((newline = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, newline).replace(/\r$/, "");
        buffer = buffer.slice(newline + 1);
        this.onLine(line);
      }
    });
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    this.child.stdin?.on("error", () => undefined); // a dead process; "exit" reports it
    const finish = (exit: PiExit): void => {
      if (this.exit !== null) return;
      this.exit = exit;
      for (const [, waiter] of this.waiting) {
        clearTimeout(waiter.timer);
        waiter.reject(new PiRpcError(exit.spawnError ?? "the pi process exited", exit.spawnError === null ? "closed" : "spawn"));
      }
      this.waiting.clear();
      resolveExit(exit);
      handlers.onExit(exit);
    };
    this.child.once("error", (error) => finish({ code: null, signal: null, spawnError: error.message }));
    this.child.once("exit", (code, signal) => finish({ code, signal, spawnError: null }));
  }

  get isRunning(): boolean {
    return this.exit === null;
  }

  /** Sends a command and resolves with its response's `data`; rejects with PiRpcError. */
  request(command: Record<string, unknown>): Promise<unknown> {
    if (this.exit !== null) return Promise.reject(new PiRpcError(this.exit.spawnError ?? "the pi process exited", this.exit.spawnError === null ? "closed" : "spawn"));
    const id = `loom-${++this.ids}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new PiRpcError(`pi did not answer ${String(command.type)} within ${this.spec.requestTimeoutMs} ms`, "timeout"));
      }, this.spec.requestTimeoutMs);
      timer.unref();
      this.waiting.set(id, { resolve, reject, timer });
      this.write({ ...command, id });
    });
  }

  /** A record with no response expected (extension_ui_response). */
  notify(message: Record<string, unknown>): void {
    if (this.exit === null) this.write(message);
  }

  stderrTail(max: number): string {
    let out = this.stderr.slice(-max).trim();
    for (const secret of this.spec.secrets) if (secret.length >= 6) out = out.replaceAll(secret, "[redacted]");
    return out;
  }

  /** Closes stdin, then SIGTERM and SIGKILL; resolves when the process is gone. */
  async close(): Promise<void> {
    if (this.exit !== null) return;
    this.child.stdin?.end();
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), KILL_GRACE_MS);
    timer.unref();
    await this.exited;
    clearTimeout(timer);
  }

  private write(message: Record<string, unknown>): void {
    this.child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not a protocol record (a stray log line)
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) return;
    const record = message as Record<string, unknown>;
    if (record.type === "response" && typeof record.id === "string" && this.waiting.has(record.id)) {
      const waiter = this.waiting.get(record.id)!;
      this.waiting.delete(record.id);
      clearTimeout(waiter.timer);
      if (record.success === false) waiter.reject(new PiRpcError(`pi refused ${String(record.command)}: ${typeof record.error === "string" ? record.error : "no reason given"}`, "rejected"));
      else waiter.resolve(record.data);
      return;
    }
    this.handlers.onMessage(record);
  }
}
