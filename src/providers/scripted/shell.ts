import { spawn } from "node:child_process";

/**
 * The process concern of the scripted agent: run one shell command the way
 * an agent's shell tool does (`/bin/sh -c` in the session cwd), stream the
 * output as it arrives, keep only its head as the preview, and kill the whole
 * process group on timeout or abort.
 */

export const OUTPUT_PREVIEW_CHARS = 2_000;
/** How long to wait for output pipes after the shell exits (a background child may hold them). */
const PIPE_GRACE_MS = 200;

export interface ShellCommandResult {
  /** Null when the command was killed (timeout, abort) or could not start. */
  readonly exitCode: number | null;
  /** The first OUTPUT_PREVIEW_CHARS of stdout and stderr, interleaved as they arrived. */
  readonly outputPreview: string;
  readonly outputTruncated: boolean;
  readonly durationMs: number;
  readonly timedOut: boolean;
}

export interface ShellCommandOptions {
  readonly cwd: string;
  /** Added to the server's environment for this command (the turn's secrets); never logged. */
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Kills the command; the promise still resolves (exitCode null). */
  readonly signal: AbortSignal;
  /** Every chunk of stdout and stderr as it arrives, whole (the preview is only the head). */
  readonly onOutput?: (text: string) => void;
}

/** Never rejects: a command that cannot start reports its error as output. */
export function runShellCommand(command: string, options: ShellCommandOptions): Promise<ShellCommandResult> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    let preview = "";
    let truncated = false;
    let timedOut = false;
    let settled = false;
    const append = (chunk: string): void => {
      options.onOutput?.(chunk);
      const room = OUTPUT_PREVIEW_CHARS - preview.length;
      if (chunk.length > room) truncated = true;
      if (room > 0) preview += chunk.slice(0, room);
    };

    const child = spawn("/bin/sh", ["-c", command], {
      cwd: options.cwd,
      ...(options.env === undefined || Object.keys(options.env).length === 0 ? {} : { env: { ...process.env, ...options.env } }),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.setEncoding("utf8").on("data", append);
    child.stderr.setEncoding("utf8").on("data", append);

    const killGroup = (): void => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = (): void => killGroup();
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) killGroup();

    const finish = (exitCode: number | null, extra?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      if (extra !== undefined) append(extra);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({
        exitCode,
        outputPreview: preview,
        outputTruncated: truncated,
        durationMs: Math.round(performance.now() - startedAt),
        timedOut,
      });
    };

    child.on("error", (error) => finish(null, `${preview === "" ? "" : "\n"}failed to start: ${error.message}`));
    child.on("exit", (code) => {
      const exitCode = timedOut ? null : code;
      const note = timedOut ? `\n[killed after ${options.timeoutMs} ms]` : undefined;
      // "close" follows once the pipes drain; do not wait on a background child that keeps them open.
      child.on("close", () => finish(exitCode, note));
      setTimeout(() => finish(exitCode, note), PIPE_GRACE_MS).unref();
    });
  });
}
