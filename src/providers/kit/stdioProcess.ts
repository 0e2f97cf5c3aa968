import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { StdioRpcError, StdioRpcErrorCode } from "./stdioRpcError.js";

/**
 * One agent child process spoken to over stdin/stdout, in a process group of
 * its own: what the stdio drivers (codex app-server, ACP agents, pi) share
 * beneath their protocols. It keeps the tail of stderr (colour codes and
 * secrets removed) for error messages, reports the exit once, and ends the
 * whole group on close and after the exit, so nothing an npm launcher or the
 * agent started outlives it. Framing is the caller's: JsonRpcProcess reads
 * JSON lines from `stdout`, the ACP SDK its own stream.
 */

export interface StdioProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Strings that never appear in an error message or log line (tokens, keys). */
  readonly secrets?: readonly string[];
}

export interface StdioProcessOptions extends StdioProcessSpec {
  /** The process as error messages name it: "codex app-server", "the agent", "pi". */
  readonly label: string;
  /** Called once, when the process is gone (its stdout drained) or could not start. */
  readonly onExit: (exit: ProcessExit) => void;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly spawnError: string | null;
}

const STDERR_TAIL_CHARS = 8_000;
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export class StdioProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly secrets: string[];
  private stderr = "";
  private exitInfo: ProcessExit | null = null;
  private readonly exited: Promise<ProcessExit>;

  /** Spawns at once; a spawn failure arrives through `onExit`. */
  constructor(private readonly options: StdioProcessOptions) {
    this.secrets = [...(options.secrets ?? [])];
    this.child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
      // Its own process group, so close() also ends what an npm launcher or the agent started.
      detached: process.platform !== "win32",
    });
    this.child.stdin.on("error", () => undefined); // EPIPE after exit; "close" reports it
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => this.note(chunk));
    this.exited = new Promise((resolve) => {
      let spawnError: string | null = null;
      this.child.once("error", (error) => {
        spawnError = error.message;
        // A process that never started may emit no "close" of its own.
        if (this.child.pid === undefined) this.finish({ code: null, signal: null, spawnError }, resolve);
      });
      // "close", not "exit": by then stdout is drained, so a last message is not lost.
      this.child.once("close", (code, signal) => this.finish({ code, signal, spawnError }, resolve));
    });
  }

  get stdin(): Writable {
    return this.child.stdin;
  }

  get stdout(): Readable {
    return this.child.stdout;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return this.exitInfo === null;
  }

  /** How the process ended, or null while it runs. */
  get exit(): ProcessExit | null {
    return this.exitInfo;
  }

  /** Resolves with how the process ended, or null if it still runs after `timeoutMs`. */
  async whenExited(timeoutMs: number): Promise<ProcessExit | null> {
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

  /** More strings to keep out of error messages (a warm process bound to a thread gets its token). */
  addSecrets(secrets: readonly string[]): void {
    this.secrets.push(...secrets);
  }

  /** Adds text to the stderr tail (a line on stdout that is not the protocol's). */
  note(text: string): void {
    this.stderr = (this.stderr + text).slice(-STDERR_TAIL_CHARS);
  }

  /** The last lines the process wrote to stderr, without colour codes or secrets. */
  stderrTail(maxChars = 1_000): string {
    return this.redact(this.stderr.replace(ANSI, "")).trim().slice(-maxChars);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (secret.length > 0) out = out.split(secret).join("[redacted]");
    }
    return out;
  }

  describeExit(exit: ProcessExit): string {
    if (exit.spawnError !== null) return `could not start ${this.options.command}: ${exit.spawnError}`;
    return `${this.options.label} exited (${exit.signal ?? `code ${String(exit.code)}`})`;
  }

  /** Why `method` got no answer from a process that is gone: spawn_failed or closed. */
  goneError(method: string, exit: ProcessExit | null = this.exitInfo): StdioRpcError {
    if (exit?.spawnError != null) return new StdioRpcError(StdioRpcErrorCode.spawnFailed, `${method}: ${this.describeExit(exit)}`);
    return new StdioRpcError(StdioRpcErrorCode.closed, `${method}: ${exit === null ? `the connection to ${this.options.label} closed` : this.describeExit(exit)}`);
  }

  /** Writes one line to stdin; a process that is gone drops it. */
  writeLine(line: string): void {
    if (this.exitInfo !== null || !this.child.stdin.writable) return;
    this.child.stdin.write(`${line}\n`);
  }

  /**
   * End the process: close stdin (these agents exit on EOF), then SIGTERM the
   * process group after `termAfterMs`, then SIGKILL after `killAfterMs`.
   * Resolves once it exited.
   */
  async close(termAfterMs = 1_000, killAfterMs = termAfterMs * 3): Promise<ProcessExit> {
    if (this.exitInfo !== null) return this.exited;
    this.child.stdin.end();
    const term = setTimeout(() => this.signal("SIGTERM"), termAfterMs);
    const kill = setTimeout(() => this.signal("SIGKILL"), killAfterMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(term);
      clearTimeout(kill);
    }
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

  private finish(exit: ProcessExit, resolve: (exit: ProcessExit) => void): void {
    if (this.exitInfo !== null) return;
    this.exitInfo = exit;
    // A process that exited may leave children in its group; they go with it.
    this.signalGroup("SIGKILL");
    resolve(exit);
    this.options.onExit(exit);
  }
}
