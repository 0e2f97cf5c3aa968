import { type ChildProcess, spawn } from "node:child_process";

/**
 * The process concern of the opencode driver: one `opencode serve` per Loom
 * provider session, listening on 127.0.0.1 on a port of its own choosing
 * behind HTTP basic auth. Start-up ends when it prints its URL; it exits
 * when closed or when it dies on its own (`exited`).
 */

export interface LaunchSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly startupTimeoutMs: number;
  /** Never echoed in an error message (the MCP token, the server password, API keys). */
  readonly secrets: readonly string[];
}

export interface ServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (ENOENT, EACCES). */
  readonly spawnError: string | null;
}

export interface OpencodeServerHandle {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Resolves once the process is gone, whoever ended it. */
  readonly exited: Promise<ServerExit>;
  /** The last characters of stderr, secrets scrubbed. */
  stderrTail(max: number): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. Idempotent. */
  close(): Promise<void>;
}

/** Starts a server; rejects with OpencodeStartError. A test passes a fake. */
export type LaunchOpencodeServer = (spec: LaunchSpec, signal?: AbortSignal) => Promise<OpencodeServerHandle>;

export class OpencodeStartError extends Error {
  constructor(
    message: string,
    /** True when the executable could not be run at all. */
    readonly notInstalled: boolean,
  ) {
    super(message);
    this.name = "OpencodeStartError";
  }
}

const LISTENING = /opencode server listening on (https?:\/\/\S+)/;
const STDERR_KEEP = 8_000;
const KILL_GRACE_MS = 3_000;

export function serveArgs(): string[] {
  return ["serve", "--hostname", "127.0.0.1", "--port", "0"];
}

export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 6) out = out.replaceAll(secret, "[redacted]");
  return out;
}

export const launchOpencodeServer: LaunchOpencodeServer = (spec, signal) =>
  new Promise<OpencodeServerHandle>((resolve, reject) => {
    let stderr = "";
    let stdout = "";
    let settled = false;
    let child: ChildProcess;
    try {
      child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
    } catch (error) {
      reject(new OpencodeStartError(`could not start ${spec.command}: ${(error as Error).message}`, true));
      return;
    }
    let resolveExit: (exit: ServerExit) => void = () => undefined;
    const exited = new Promise<ServerExit>((done) => (resolveExit = done));
    const tail = (max: number): string => scrub(stderr.slice(-max).trim(), spec.secrets);
    const fail = (message: string, notInstalled = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      child.kill("SIGKILL");
      const detail = tail(600);
      reject(new OpencodeStartError(`${message}${detail === "" ? "" : `; stderr: ${detail}`}`, notInstalled));
    };
    const onAbort = (): void => fail("opening the opencode session was aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => fail(`opencode serve did not listen within ${spec.startupTimeoutMs} ms`), spec.startupTimeoutMs);
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEEP);
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      if (settled) return;
      stdout = (stdout + chunk.toString("utf8")).slice(-STDERR_KEEP);
      const match = LISTENING.exec(stdout);
      if (match?.[1] === undefined) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve({
        url: match[1].replace(/\/$/, ""),
        exited,
        stderrTail: tail,
        close: () => stopChild(child, exited),
      });
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      const missing = error.code === "ENOENT" || error.code === "EACCES";
      fail(`could not start ${spec.command}: ${error.message}`, missing);
      resolveExit({ code: null, signal: null, spawnError: error.message });
    });
    child.once("exit", (code, exitSignal) => {
      fail(`opencode serve exited during start-up (${exitSignal ?? `exit code ${String(code)}`})`);
      resolveExit({ code, signal: exitSignal, spawnError: null });
    });
  });

async function stopChild(child: ChildProcess, exited: Promise<ServerExit>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
  timer.unref();
  await exited;
  clearTimeout(timer);
}
