import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Real git repositories in temporary folders for the workspaces tests and
 * benchmarks. Everything runs the real `git` binary with a fixed identity
 * and no global or system configuration, so results do not depend on the
 * machine's git settings.
 */

export const TEST_GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  LC_ALL: "C",
};

/** Run git synchronously in `cwd` and return its stdout (trimmed of the final newline). */
export function gitSync(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: TEST_GIT_ENV, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }).replace(/\n$/, "");
}

/** Run git and return its raw stdout bytes (for byte-identical comparisons). */
export function gitBytes(cwd: string, ...args: string[]): Buffer {
  return execFileSync("git", args, { cwd, env: { ...TEST_GIT_ENV, GIT_OPTIONAL_LOCKS: "0" }, maxBuffer: 256 * 1024 * 1024 });
}

/** A fresh temporary folder (real path); `remove()` deletes it. */
export function tempDir(prefix: string): { readonly path: string; remove(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), `loom-${prefix}-`)));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export type FileContents = Readonly<Record<string, string | Buffer | null>>;

/** Write files under `root` (creating folders); a null content deletes the file. */
export function writeFiles(root: string, files: FileContents): void {
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    if (content === null) {
      rmSync(target, { force: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}

export function readText(root: string, path: string): string {
  return readFileSync(join(root, path), "utf8");
}

/**
 * `git init` in `dir` (branch `main`) and, when `files` is given, one
 * commit with them. Returns `dir`.
 */
export function initRepo(dir: string, files?: FileContents, message = "initial"): string {
  mkdirSync(dir, { recursive: true });
  gitSync(dir, "init", "-q", "-b", "main");
  if (files) commitFiles(dir, files, message);
  return dir;
}

/** Write files, stage everything and commit; returns the new commit. */
export function commitFiles(dir: string, files: FileContents, message = "change"): string {
  writeFiles(dir, files);
  gitSync(dir, "add", "-A");
  gitSync(dir, "commit", "-q", "--no-verify", "-m", message);
  return gitSync(dir, "rev-parse", "HEAD");
}
