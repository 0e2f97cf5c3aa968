import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";

/**
 * The setup step of a prepared run: run a project's setup command (e.g.
 * `npm ci`) in a worktree, stream its output, and stop it on abort or
 * timeout. The command runs in its own process group, and the whole group
 * is stopped (SIGTERM, then SIGKILL after a grace period) on abort, on
 * timeout, and when the command exits leaving processes behind, so a
 * setup never outlives its result.
 */

/** A shell command line (run with `/bin/sh -c`, as a project's configured setup string), or a program and its arguments. */
export type SetupCommand = { readonly shell: string } | { readonly argv: readonly [string, ...string[]] };

export const SetupOutcome = {
  succeeded: "succeeded",
  failed: "failed",
  aborted: "aborted",
  timedOut: "timed_out",
} as const;
export type SetupOutcome = (typeof SetupOutcome)[keyof typeof SetupOutcome];

export interface SetupOutputChunk {
  readonly stream: "stdout" | "stderr";
  /** Decoded UTF-8 text; a multi-byte character is never split across chunks. */
  readonly text: string;
}

export interface RunSetupInput {
  readonly cwd: string;
  readonly command: SetupCommand;
  /** Added to Loom's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Called with each piece of output as it arrives, in arrival order. */
  readonly onOutput?: (chunk: SetupOutputChunk) => void;
  readonly signal?: AbortSignal;
  /** Stop the command after this many milliseconds. */
  readonly timeoutMs?: number;
  /** How much of the combined output the result keeps (its end). Default 16 KiB. */
  readonly tailBytes?: number;
  /** Between SIGTERM and SIGKILL. Default 2 s. */
  readonly killGraceMs?: number;
  /** Called once the command started, with its process group id (its pid): a caller that may die first can stop the group later. */
  readonly onSpawn?: (processGroupId: number) => void;
}

export interface SetupResult {
  readonly outcome: SetupOutcome;
  /** The exit code, or null when a signal ended it (or it never started: aborted before). */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly durationMs: number;
  /** The last `tailBytes` of stdout and stderr together, in arrival order. */
  readonly outputTail: string;
  /** Bytes of output dropped from the front of `outputTail`. */
  readonly outputTruncatedBytes: number;
}

const DEFAULT_TAIL_BYTES = 16 * 1024;
const DEFAULT_KILL_GRACE_MS = 2_000;

export async function runSetup(input: RunSetupInput): Promise<SetupResult> {
  const tailBytes = positiveInteger(input.tailBytes ?? DEFAULT_TAIL_BYTES, "tailBytes");
  const graceMs = positiveInteger(input.killGraceMs ?? DEFAULT_KILL_GRACE_MS, "killGraceMs");
  if (input.timeoutMs !== undefined) positiveInteger(input.timeoutMs, "timeoutMs");
  const info = await stat(input.cwd).catch(() => null);
  if (!info?.isDirectory()) throw new WorkspaceError(WorkspaceErrorCode.pathNotFound, `setup folder ${input.cwd} does not exist`);
  if (input.signal?.aborted) {
    return { outcome: SetupOutcome.aborted, exitCode: null, signal: null, durationMs: 0, outputTail: "", outputTruncatedBytes: 0 };
  }

  const [file, args] = "shell" in input.command ? ["/bin/sh", ["-c", input.command.shell]] : [input.command.argv[0], input.command.argv.slice(1)];
  const started = performance.now();
  const child = spawn(file, args, { cwd: input.cwd, env: { ...process.env, ...input.env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  if (child.pid !== undefined) input.onSpawn?.(child.pid);
  const tail = new OutputTail(tailBytes);
  let stopReason: typeof SetupOutcome.aborted | typeof SetupOutcome.timedOut | null = null;
  let killTimer: NodeJS.Timeout | undefined;

  const killGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  const stop = (reason: typeof SetupOutcome.aborted | typeof SetupOutcome.timedOut) => {
    if (stopReason !== null) return;
    stopReason = reason;
    killGroup("SIGTERM");
    killTimer = setTimeout(() => killGroup("SIGKILL"), graceMs);
  };
  const onAbort = () => stop(SetupOutcome.aborted);
  input.signal?.addEventListener("abort", onAbort, { once: true });
  const timeout = input.timeoutMs === undefined ? undefined : setTimeout(() => stop(SetupOutcome.timedOut), input.timeoutMs);

  for (const stream of ["stdout", "stderr"] as const) {
    const decoder = new StringDecoder("utf8");
    const emit = (text: string) => {
      if (text.length > 0) input.onOutput?.({ stream, text });
    };
    child[stream].on("data", (chunk: Buffer) => {
      tail.push(chunk);
      emit(decoder.write(chunk));
    });
    child[stream].on("end", () => emit(decoder.end()));
  }

  try {
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      child.once("error", (error) =>
        reject(new WorkspaceError(WorkspaceErrorCode.setupSpawnFailed, `cannot start ${file}: ${error.message}`, { cause: error })),
      );
      child.once("exit", (exitCode, exitSignal) => {
        // Whatever the command left running in its group would hold the pipes open: stop it.
        killGroup("SIGKILL");
        child.once("close", () => resolve({ code: exitCode, signal: exitSignal }));
      });
    });
    const outcome = stopReason ?? (code === 0 ? SetupOutcome.succeeded : SetupOutcome.failed);
    const { text, dropped } = tail.read();
    return { outcome, exitCode: code, signal, durationMs: performance.now() - started, outputTail: text, outputTruncatedBytes: dropped };
  } finally {
    clearTimeout(timeout);
    clearTimeout(killTimer);
    input.signal?.removeEventListener("abort", onAbort);
  }
}

/** The last `limit` bytes of output, cut at a character boundary when read. */
class OutputTail {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private droppedBytes = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Keep whole chunks while the ones after the first still fill the limit.
    while (this.size - this.chunks[0]!.length >= this.limit) {
      const first = this.chunks.shift()!;
      this.size -= first.length;
      this.droppedBytes += first.length;
    }
  }

  read(): { readonly text: string; readonly dropped: number } {
    const all = Buffer.concat(this.chunks);
    let start = Math.max(0, all.length - this.limit);
    // Skip UTF-8 continuation bytes so the tail starts on a whole character.
    while (start < all.length && (all[start]! & 0xc0) === 0x80) start += 1;
    return { text: all.subarray(start).toString("utf8"), dropped: this.droppedBytes + start };
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `${name} must be a positive integer, got ${value}`);
  return value;
}
