import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { TEST_GIT_ENV, gitSync, initRepo, tempDir } from "../src/testkit/gitRepo.js";
import { mergeWithCheck } from "../src/workspaces/checkedMerge.js";
import { commitWorktreeChanges } from "../src/workspaces/commitChanges.js";
import { isWorkspaceError } from "../src/workspaces/errors.js";
import { createWorktree } from "../src/workspaces/worktrees.js";
import { fmt, now, percentile, printTable, seconds } from "./stats.js";

/**
 * Test-gated merges (docs/workspaces.md): `children` worktree children of a
 * repository of `files` files each commit one change; `overlapping` of them
 * edit the same line of one file (so all but the first conflict), the rest
 * a file of their own. They are merged one at a time into the parent with
 * mergeWithCheck (the merge made as an object, checked out in a scratch
 * worktree, the check run there, then the parent moved) against the bare
 * way on a clone: `git merge --no-edit` in the checkout, then the same
 * check there (`git merge --abort` on a conflict). Each child's two merges
 * run back to back, order alternating. Figures: the share each way merged
 * with the check green, and the median per-merge ratio. Goal ≤ 1.2×.
 */

const run = promisify(execFile);

export interface CheckedMergeBenchOptions {
  readonly files: number;
  readonly children: number;
  readonly overlapping: number;
  /** The check both sides run: a shell command line. */
  readonly check: string;
}

export async function runCheckedMergeBench(options: CheckedMergeBenchOptions): Promise<void> {
  const dir = tempDir("bench-checked-merge");
  try {
    const repo = join(dir.path, "repo");
    buildRepository(repo, options.files);
    const branches: { path: string; branch: string }[] = [];
    for (let i = 0; i < options.children; i += 1) {
      const child = await createWorktree({ repoPath: repo, managedDir: join(dir.path, "managed"), threadId: `thread:bench-${i}` });
      const path = i < options.overlapping ? "shared.txt" : join("dir000", `child${i}.txt`);
      writeFileSync(join(child.path, path), i < options.overlapping ? `the shared line, as child ${i} wrote it\n` : `child ${i}\n`);
      await commitWorktreeChanges({ worktreePath: child.path, message: `child ${i}` });
      branches.push({ path: child.path, branch: child.branch });
    }
    const copy = join(dir.path, "copy");
    await run("git", ["clone", "-q", repo, copy], { env: TEST_GIT_ENV });

    const ours: number[] = [];
    const bare: number[] = [];
    let oursMerged = 0;
    let bareMerged = 0;
    for (const [i, child] of branches.entries()) {
      const measureOurs = async () => {
        const start = now();
        const merged = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: child.path, check: options.check, scratchDir: join(dir.path, "scratch"), scratchName: "parent" }).then(
          () => true,
          (error: unknown) => {
            if (isWorkspaceError(error, "workspace_merge_conflict")) return false;
            throw error;
          },
        );
        ours.push(seconds(start) * 1000);
        if (merged) oursMerged += 1;
      };
      const measureBare = async () => {
        const start = now();
        const merged = await run("git", ["merge", "-q", "--no-edit", `origin/${child.branch}`], { cwd: copy, env: TEST_GIT_ENV }).then(
          () => true,
          async () => {
            await run("git", ["merge", "--abort"], { cwd: copy, env: TEST_GIT_ENV });
            return false;
          },
        );
        if (merged) await run("/bin/sh", ["-c", options.check], { cwd: copy });
        bare.push(seconds(start) * 1000);
        if (merged) bareMerged += 1;
      };
      if (i % 2 === 0) await measureOurs().then(measureBare);
      else await measureBare().then(measureOurs);
    }
    const ratios = ours.map((time, i) => time / bare[i]!).sort((a, b) => a - b);
    const p50 = (times: readonly number[]) => percentile([...times].sort((a, b) => a - b), 50).toFixed(1);
    const solvable = options.children - Math.max(0, options.overlapping - 1);
    printTable(`Test-gated merges (${fmt(options.files)} files, ${options.children} children, ${options.overlapping} overlapping, check \`${options.check}\`)`, [
      ["measure", "merged, check green", "of solvable without a resolver", "p50 ms per merge", "median paired ratio"],
      ["git merge --no-edit + check in the checkout (baseline)", String(bareMerged), `${bareMerged}/${solvable}`, p50(bare), "1.00"],
      ["mergeWithCheck (scratch worktree, check, then the parent moves)", String(oursMerged), `${oursMerged}/${solvable}`, p50(ours), percentile(ratios, 50).toFixed(2)],
    ]);
  } finally {
    dir.remove();
  }
}

function buildRepository(repo: string, files: number): void {
  initRepo(repo, { "shared.txt": "the shared line\n" });
  for (let i = 0; i < files; i += 1) {
    const folder = join(repo, `dir${String(Math.floor(i / 100)).padStart(3, "0")}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file${String(i % 100).padStart(2, "0")}.txt`), `file ${i}\n${"some source text of a typical line\n".repeat(5)}`);
  }
  gitSync(repo, "config", "gc.auto", "0");
  gitSync(repo, "add", "-A");
  gitSync(repo, "commit", "-q", "-m", "bench repository");
  gitSync(repo, "gc", "-q");
}
