import { TREE_DIFF_OPTIONS } from "./fileChanges.js";
import { gitFailure, spawnGit } from "./git.js";

/**
 * A unified diff read from git with a byte cap. The patch is cut only
 * between files (never inside one, never inside a UTF-8 sequence): files
 * are kept in git's order while they fit, and the first that does not fit
 * ends the patch; it and every later file are left out. git is stopped as
 * soon as the cap is reached, so memory stays near the cap.
 */

export interface BoundedPatch {
  /** The file sections that fit, concatenated. */
  readonly text: string;
  /** Bytes of `text` (UTF-8). */
  readonly bytes: number;
  /** How many file sections made it in; the files from this index on were left out. */
  readonly sectionsKept: number;
  readonly truncated: boolean;
}

const SECTION_START = Buffer.from("\ndiff --git ");

export function readBoundedPatch(cwd: string, fromTree: string, toTree: string, maxBytes: number, contextLines: number): Promise<BoundedPatch> {
  const args = [
    "diff-tree",
    ...TREE_DIFF_OPTIONS,
    "-p",
    `-U${contextLines}`,
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    fromTree,
    toTree,
  ];
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, { cwd });
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let sections = 0;
    let pending: Buffer = Buffer.alloc(0);
    let stopped = false;
    let stderr = "";

    const stop = () => {
      stopped = true;
      child.stdout.destroy();
      child.kill("SIGTERM");
    };
    /** Keep one complete section, or stop when it does not fit. */
    const take = (section: Buffer): boolean => {
      if (keptBytes + section.length > maxBytes) return false;
      kept.push(section);
      keptBytes += section.length;
      sections += 1;
      return true;
    };

    child.stdout.on("data", (chunk: Buffer) => {
      if (stopped) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        const boundary = pending.indexOf(SECTION_START, 1);
        if (boundary < 0) break;
        if (!take(pending.subarray(0, boundary + 1))) return stop();
        pending = pending.subarray(boundary + 1);
      }
      // The unfinished section already cannot fit: no need to read the rest of it.
      if (keptBytes + pending.length > maxBytes) stop();
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.stdin.end();
    child.once("error", reject);
    child.once("close", (code) => {
      if (!stopped && code !== 0) return reject(gitFailure(args, { code: code ?? -1, stdout: Buffer.alloc(0), stderr }));
      const complete = !stopped && (pending.length === 0 || take(pending));
      const text = Buffer.concat(kept);
      resolve({ text: text.toString("utf8"), bytes: text.length, sectionsKept: sections, truncated: !complete });
    });
  });
}
