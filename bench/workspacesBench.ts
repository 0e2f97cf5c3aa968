import { execFile } from "node:child_process";
import { cpSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { captureAndRecord, type CaptureContext } from "../src/app/workspaces/capture.js";
import { TEST_PROVIDERS } from "../src/core/testing/scenario.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { TEST_GIT_ENV, gitSync, initRepo, tempDir } from "../src/testkit/gitRepo.js";
import { captureCheckpoint } from "../src/workspaces/checkpoints.js";
import { createWorktree } from "../src/workspaces/worktrees.js";
import { fmt, now, percentile, printTable, seconds } from "./stats.js";

/**
 * Workspaces: checkpoint capture and worktree creation on a repository of
 * `files` small text files.
 *
 * Capture: each round changes `changed` files (a different set each round)
 * in the repository and, identically, in a copy of it; then times
 * captureCheckpoint on the repository against `git add -A && git
 * write-tree` on the copy (two git processes, started from Node the same
 * way). Both sides have warm stat caches (the private index and the copy's
 * index), so the ratio shows what the private index, the ref and the
 * per-file stats cost on top of git's own snapshot. Goal ≤ 1.5×. The
 * third side is the engine's capture effect (captureAndRecord): the same
 * capture plus resolving the thread's working tree and recording the
 * checkpoint in a SQLite event store, i.e. what a turn pays. Each round's
 * sides run back to back (order rotating), so the median of the per-round
 * ratios is the figure least moved by other load on the machine.
 *
 * Worktree creation: createWorktree against plain `git worktree add -b`,
 * alternating, each checking out every file. Goal ≤ 1.2×.
 */

const run = promisify(execFile);
const SCOPE = "checkpointScope:bench";

export interface WorkspacesBenchOptions {
  readonly files: number;
  readonly changed: number;
  readonly captureRounds: number;
  readonly worktreeRounds: number;
}

export async function runWorkspacesBench(options: WorkspacesBenchOptions): Promise<void> {
  const dir = tempDir("bench-workspaces");
  try {
    const repo = join(dir.path, "repo");
    const copy = join(dir.path, "copy");
    const indexDir = join(dir.path, "indexes");
    buildRepository(repo, options.files);
    cpSync(repo, copy, { recursive: true, preserveTimestamps: true });

    // Warm both stat caches: the scope's first capture seeds its private index from the repository's
    // (valid stat data: no rehash); the copy's files have new inodes, so its first run rehashes all.
    const firstStart = now();
    await captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal: 0, indexDir });
    const firstCapture = seconds(firstStart) * 1000;
    await baselineSnapshot(copy);

    const engine = await engineOn(repo, join(dir.path, "loom.db"));
    await captureAndRecord(engine, { threadId: BENCH_THREAD, checkpointId: "checkpoint:bench-0", runId: null, trigger: "turn_end", forRunId: null });

    const ours: number[] = [];
    const baseline: number[] = [];
    const effect: number[] = [];
    for (let round = 1; round <= options.captureRounds; round += 1) {
      for (const root of [repo, copy]) changeFiles(root, options, round);
      const measureOurs = async () => {
        const start = now();
        const result = await captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal: round, indexDir });
        ours.push(seconds(start) * 1000);
        if (result.status !== "ready" || result.files.length !== options.changed) throw new Error(`capture ${round} saw ${result.files.length} changed files`);
      };
      const measureBaseline = async () => {
        const start = now();
        await baselineSnapshot(copy);
        baseline.push(seconds(start) * 1000);
      };
      const measureEffect = async () => {
        const checkpointId = `checkpoint:bench-${round}`;
        const start = now();
        await captureAndRecord(engine, { threadId: BENCH_THREAD, checkpointId, runId: null, trigger: "turn_end", forRunId: null });
        effect.push(seconds(start) * 1000);
        const recorded = engine.orchestrator.state.checkpoints.get(checkpointId);
        if (recorded?.status !== "ready" || recorded.files.length !== options.changed) throw new Error(`capture effect ${round} recorded ${recorded?.status ?? "nothing"}`);
      };
      // Rotate which goes first so the page cache and CPU frequency favour none.
      const sides = [measureBaseline, measureOurs, measureEffect];
      for (let i = 0; i < sides.length; i += 1) await sides[(round + i) % sides.length]!();
    }
    await engine.orchestrator.close();
    const baseP50 = percentile([...baseline].sort((a, b) => a - b), 50);
    printTable(`Checkpoint capture (${fmt(options.files)} files, ${options.changed} changed per round, ${options.captureRounds} rounds)`, [
      ["measure", "min ms", "p50 ms", "max ms", "ratio of p50s", "median paired ratio"],
      [...timeRow("git add -A && git write-tree on a copy (baseline)", baseline, baseP50), "1.00"],
      [...timeRow("captureCheckpoint (private index, commit, ref, file stats)", ours, baseP50), pairedRatio(ours, baseline)],
      [...timeRow("capture effect (captureAndRecord: + working tree probe, SQLite record)", effect, baseP50), pairedRatio(effect, baseline)],
      ["first capture of the scope (seeds the private index)", "", firstCapture.toFixed(1), "", (firstCapture / baseP50).toFixed(2), ""],
    ]);

    await benchWorktrees(repo, join(dir.path, "managed"), join(dir.path, "plain"), options.worktreeRounds);
  } finally {
    dir.remove();
  }
}

const BENCH_THREAD = "thread:bench";

/** The engine on a SQLite file with one thread working in `repo` (its project root), as the capture effect sees it. */
async function engineOn(repo: string, databasePath: string): Promise<CaptureContext & { readonly orchestrator: Orchestrator }> {
  const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(databasePath), providers: (id) => TEST_PROVIDERS[id] ?? null });
  const created = await orchestrator.dispatch({ type: "thread.create", commandId: "cmd:bench-thread", data: { threadId: BENCH_THREAD, projectId: "bench" } });
  if (created.status !== "accepted") throw new Error("the bench thread was not created");
  return {
    orchestrator,
    projects: [{ id: "bench", root: repo, name: "bench" }],
    workspaces: { worktreesRoot: join(repo, "..", "worktrees"), branchPrefix: "loom/", fallbackRoot: repo, setupRunDir: join(repo, "..", "run") },
  };
}

async function benchWorktrees(repo: string, managedDir: string, plainDir: string, rounds: number): Promise<void> {
  mkdirSync(plainDir, { recursive: true });
  const ours: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const measureOurs = async () => {
      const start = now();
      await createWorktree({ repoPath: repo, managedDir, threadId: `thread:bench-${round}` });
      ours.push(seconds(start) * 1000);
    };
    const measurePlain = async () => {
      const start = now();
      await run("git", ["worktree", "add", "--quiet", "-b", `plain-${round}`, join(plainDir, `w${round}`), "HEAD"], { cwd: repo, env: TEST_GIT_ENV });
      plain.push(seconds(start) * 1000);
    };
    if (round % 2 === 0) await measureOurs().then(measurePlain);
    else await measurePlain().then(measureOurs);
  }
  const baseP50 = percentile([...plain].sort((a, b) => a - b), 50);
  printTable(`Worktree creation (${rounds} each, alternating)`, [
    ["measure", "min ms", "p50 ms", "max ms", "ratio of p50s", "median paired ratio"],
    [...timeRow("git worktree add -b (baseline)", plain, baseP50), "1.00"],
    [...timeRow("createWorktree (name, base, metadata)", ours, baseP50), pairedRatio(ours, plain)],
  ]);
}

/** The median of round-by-round ratios: each pair ran back to back, so machine load drifting between rounds cancels out. */
function pairedRatio(ours: readonly number[], baseline: readonly number[]): string {
  const ratios = ours.map((time, i) => time / baseline[i]!).sort((a, b) => a - b);
  return percentile(ratios, 50).toFixed(2);
}

function timeRow(label: string, times: readonly number[], baseP50: number): string[] {
  const sorted = [...times].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  return [label, sorted[0]!.toFixed(1), p50.toFixed(1), sorted.at(-1)!.toFixed(1), (p50 / baseP50).toFixed(2)];
}

function filePath(i: number): string {
  return join(`dir${String(Math.floor(i / 100)).padStart(3, "0")}`, `file${String(i % 100).padStart(2, "0")}.txt`);
}

function buildRepository(repo: string, files: number): void {
  initRepo(repo);
  for (let i = 0; i < files; i += 1) {
    const path = join(repo, filePath(i));
    if (i % 100 === 0) mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, `file ${i}\n${"some source text of a typical line\n".repeat(5)}`);
  }
  writeFileSync(join(repo, ".gitignore"), "node_modules/\n*.log\n");
  settleTimestamps(repo, files);
  gitSync(repo, "config", "gc.auto", "0");
  gitSync(repo, "add", "-A");
  gitSync(repo, "commit", "-q", "-m", "bench repository");
  // Pack now, in the foreground: a detached auto-gc would race the copy, and a packed repository is the usual shape.
  gitSync(repo, "gc", "-q");
}

/** Date every file a minute back, so no index entry is "racily clean" (which makes git re-read it on every run). */
function settleTimestamps(root: string, files: number): void {
  const past = new Date(Date.now() - 60_000);
  for (let i = 0; i < files; i += 1) utimesSync(join(root, filePath(i)), past, past);
}

function changeFiles(root: string, options: WorkspacesBenchOptions, round: number): void {
  const stride = Math.floor(options.files / options.changed);
  for (let k = 0; k < options.changed; k += 1) {
    const i = (k * stride + round) % options.files;
    writeFileSync(join(root, filePath(i)), `file ${i}, round ${round}\n`);
  }
}

async function baselineSnapshot(root: string): Promise<void> {
  await run("git", ["add", "-A"], { cwd: root, env: TEST_GIT_ENV });
  await run("git", ["write-tree"], { cwd: root, env: TEST_GIT_ENV });
}
