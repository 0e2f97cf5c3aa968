import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";

/**
 * The one way this library runs git: `spawn("git", args)` with an argument
 * array (never a shell string), in a given directory, with an environment
 * cleaned of variables that would point git at another repository, index or
 * work tree than the one we name.
 */

/** Inherited variables that would redirect git away from `cwd`; removed from every call. */
const REDIRECTING_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_QUARANTINE_PATH",
] as const;

export interface GitOptions {
  readonly cwd: string;
  /** Variables added for this call (e.g. GIT_INDEX_FILE for a private index). */
  readonly env?: Readonly<Record<string, string>>;
  /** Bytes written to git's stdin. */
  readonly input?: string | Buffer;
  /** Exit codes that are answers rather than failures (e.g. 1 for `merge-base --is-ancestor`). */
  readonly okCodes?: readonly number[];
}

export interface GitResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export function gitEnv(extra?: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING_VARIABLES) delete env[name];
  // Plain-C messages are what we match on; optional locks off so read-only
  // commands (status, diff) never rewrite the user's index as a side effect.
  env.LC_ALL = "C";
  env.LANGUAGE = "C";
  env.GIT_OPTIONAL_LOCKS = "0";
  env.GIT_TERMINAL_PROMPT = "0";
  return { ...env, ...extra };
}

/** Start git with piped stdio; the caller reads the streams (used for bounded diffs). */
export function spawnGit(args: readonly string[], options: GitOptions): ChildProcessWithoutNullStreams {
  return spawn("git", args, { cwd: options.cwd, env: gitEnv(options.env), stdio: ["pipe", "pipe", "pipe"] });
}

/** Run git to completion. An exit code outside `okCodes` (default [0]) throws a WorkspaceError. */
export function git(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, options);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.stdin.on("error", () => undefined); // git may exit before reading its input; its exit code tells.
    child.once("error", (error) => {
      reject(new WorkspaceError(WorkspaceErrorCode.gitFailed, `cannot run git: ${error.message}`, { cause: error }));
    });
    child.once("close", (code) => {
      const result: GitResult = { code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") };
      if ((options.okCodes ?? [0]).includes(result.code)) resolve(result);
      else reject(gitFailure(args, result));
    });
    child.stdin.end(options.input ?? "");
  });
}

/** `git` returning trimmed stdout text. */
export async function gitText(args: readonly string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.toString("utf8").trim();
}

/** Map a failed git call to a typed error; lock contention is the one retryable case. */
export function gitFailure(args: readonly string[], result: GitResult): WorkspaceError {
  const stderr = result.stderr.trim();
  const what = `git ${args[0] ?? ""} exited with ${result.code}`;
  if (/\.lock'?: File exists|Unable to create '.*\.lock'/i.test(stderr)) {
    return new WorkspaceError(WorkspaceErrorCode.locked, `${what}: ${stderr}`);
  }
  if (/not a git repository/i.test(stderr)) {
    return new WorkspaceError(WorkspaceErrorCode.notARepository, `${what}: ${stderr}`);
  }
  return new WorkspaceError(WorkspaceErrorCode.gitFailed, stderr ? `${what}: ${stderr}` : what);
}

/** Split NUL-terminated git output (`-z`) into its fields, dropping the final empty one. */
export function splitNul(output: Buffer | string): string[] {
  const text = typeof output === "string" ? output : output.toString("utf8");
  const fields = text.split("\0");
  if (fields.at(-1) === "") fields.pop();
  return fields;
}
