import { existsSync } from "node:fs";
import { lstat, mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { FileChange } from "../events.js";

/**
 * The file concern of the scripted agent: write a file under the session
 * cwd and describe the change as a file_change entry. A path that is
 * absolute, or that leaves the cwd through `..` or a symbolic link, is
 * refused before anything is created.
 */

export const FileWriteErrorCode = {
  outsideCwd: "path_outside_cwd",
  failed: "write_failed",
} as const;
export type FileWriteErrorCode = (typeof FileWriteErrorCode)[keyof typeof FileWriteErrorCode];

export class FileWriteError extends Error {
  readonly retryable = false;
  constructor(
    readonly code: FileWriteErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "FileWriteError";
  }
}

/** Write `content` to `path` (relative to `cwd`), creating directories. */
export async function writeFileInCwd(cwd: string, path: string, content: string): Promise<FileChange> {
  const root = await realpath(cwd);
  const target = resolve(root, path);
  const rel = relative(root, target);
  if (isAbsolute(path) || !isInside(rel)) {
    throw new FileWriteError(
      FileWriteErrorCode.outsideCwd,
      `refusing to write ${path}: the path must stay inside the working directory`,
    );
  }
  await assertRealPathInside(root, target, path);
  try {
    const before = existsSync(target) ? await readFile(target, "utf8") : null;
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, "utf8");
    const { additions, deletions } = countLineChanges(before, content);
    return { path: rel.split(sep).join("/"), kind: before === null ? "add" : "update", additions, deletions };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new FileWriteError(FileWriteErrorCode.failed, `cannot write ${path}: ${reason}`);
  }
}

/** Above this many cells the middle of a diff is counted as replaced rather than aligned. */
const MAX_DIFF_CELLS = 4_000_000;

/**
 * Lines added and removed between two versions, as a minimal line diff
 * counts them (via the longest common subsequence after trimming the common
 * head and tail). `before` null means a new file.
 */
export function countLineChanges(before: string | null, after: string): { additions: number; deletions: number } {
  const oldLines = before === null ? [] : linesOf(before);
  const newLines = linesOf(after);
  let head = 0;
  while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head += 1;
  let tail = 0;
  while (
    tail < oldLines.length - head &&
    tail < newLines.length - head &&
    oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
  ) {
    tail += 1;
  }
  const oldMiddle = oldLines.slice(head, oldLines.length - tail);
  const newMiddle = newLines.slice(head, newLines.length - tail);
  const common = oldMiddle.length * newMiddle.length > MAX_DIFF_CELLS ? 0 : commonLines(oldMiddle, newMiddle);
  return { additions: newMiddle.length - common, deletions: oldMiddle.length - common };
}

/** Length of the longest common subsequence, in O(a·b) time and O(b) space. */
function commonLines(a: readonly string[], b: readonly string[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const line of a) {
    const current = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = line === b[j - 1] ? (previous[j - 1] ?? 0) + 1 : Math.max(previous[j] ?? 0, current[j - 1] ?? 0);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** A trailing newline ends the last line; it does not start another. */
function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function isInside(rel: string): boolean {
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** The nearest existing ancestor (or the target itself) must resolve inside the cwd. */
async function assertRealPathInside(root: string, target: string, path: string): Promise<void> {
  let existing = target;
  while (!(await exists(existing))) existing = dirname(existing);
  const real = await realpath(existing).catch(() => null);
  if (real === null) {
    throw new FileWriteError(FileWriteErrorCode.failed, `cannot write ${path}: it is a broken symbolic link`);
  }
  if (real !== root && !isInside(relative(root, real))) {
    throw new FileWriteError(
      FileWriteErrorCode.outsideCwd,
      `refusing to write ${path}: it resolves outside the working directory`,
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
