import { mkdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git } from "./git.js";
import { MergeOutcome, type MergeResult, type MergeWorktreeInput, moveWorkingTree, planMerge } from "./merge.js";
import { SetupOutcome, runSetup } from "./setupRunner.js";

/**
 * A test-gated merge: the merge `mergeChildWorktree` would make is checked
 * out alone in a scratch worktree (detached, outside both checkouts), the
 * check command runs there, and only when it passes does the parent's
 * working tree move to the merge. A conflict, or a check that fails, times
 * out or cannot start, leaves the parent exactly as it was. The scratch
 * worktree stays for the next merge of the same name: its caller runs one
 * merge per scratch name at a time.
 */

export interface CheckedMergeInput extends MergeWorktreeInput {
  /** The check: a shell command line (`npm test`), run with `/bin/sh -c` in the scratch worktree. */
  readonly check: string;
  /**
   * Run first in the scratch worktree, as in every worktree Loom makes (the
   * project's setup, e.g. `npm ci`: ignored files such as node_modules are not
   * in a fresh checkout). Its failure fails the check.
   */
  readonly setup?: string;
  /** Where scratch worktrees are made (created when missing). */
  readonly scratchDir: string;
  /** The scratch worktree's folder in `scratchDir`, reused by later merges of the name; one merge at a time per name. */
  readonly scratchName: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called as the setup and the check start, with the process group each runs in and its folder: a caller that may die first can stop the group later. */
  readonly onSpawn?: (processGroupId: number, cwd: string) => void;
}

export interface CheckReport {
  readonly command: string;
  readonly outcome: SetupOutcome;
  readonly exitCode: number | null;
  readonly durationMs: number;
  /** The last 16 KiB of its output. */
  readonly output: string;
}

export interface CheckedMergeResult extends MergeResult {
  /** Null when the parent already had the child's commit (nothing to check). */
  readonly check: CheckReport | null;
}

export async function mergeWithCheck(input: CheckedMergeInput): Promise<CheckedMergeResult> {
  if (input.check.trim().length === 0) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, "the check command is empty");
  const { parent, result } = await planMerge(input);
  if (result.outcome === MergeOutcome.upToDate) return { ...result, check: null };
  const scratch = await scratchAt(parent.root, join(input.scratchDir, input.scratchName), result.commit);
  const run = async (command: string): Promise<CheckReport> => {
    const ran = await runSetup({
      cwd: scratch,
      command: { shell: command },
      ...(input.env === undefined ? {} : { env: input.env }),
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      ...(input.onSpawn === undefined ? {} : { onSpawn: (pid: number) => input.onSpawn?.(pid, scratch) }),
    });
    return { command, outcome: ran.outcome, exitCode: ran.exitCode, durationMs: Math.round(ran.durationMs), output: ran.outputTail };
  };
  const setup = input.setup === undefined ? null : await run(input.setup);
  const check = setup !== null && setup.outcome !== SetupOutcome.succeeded ? setup : await run(input.check);
  if (check.outcome !== SetupOutcome.succeeded) throw new CheckFailedError(check);
  await moveWorkingTree(parent, result.previousHead, result.commit, result.files);
  return { ...result, check };
}

/**
 * The scratch worktree at `path`, detached at `commit` with no file of another
 * state left (ignored files, such as an installed node_modules, are kept, as
 * in a developer's checkout: the setup then has less to do). One made by an
 * earlier merge is reused, which rewrites only the files that differ; a
 * broken one is made again.
 */
async function scratchAt(repoRoot: string, path: string, commit: string): Promise<string> {
  if (existsSync(join(path, ".git"))) {
    const reused = await git(["checkout", "--quiet", "--force", "--detach", commit], { cwd: path })
      .then(() => git(["clean", "--quiet", "-fd"], { cwd: path }))
      .then(
        () => true,
        () => false,
      );
    if (reused) return path;
  }
  await rm(path, { recursive: true, force: true });
  await git(["worktree", "prune"], { cwd: repoRoot });
  await mkdir(dirname(path), { recursive: true });
  await git(["worktree", "add", "--quiet", "--detach", path, commit], { cwd: repoRoot });
  return path;
}

/** The check did not pass on the merged state; the parent was not changed. */
export class CheckFailedError extends WorkspaceError {
  constructor(readonly check: CheckReport) {
    const why = check.outcome === SetupOutcome.timedOut ? "timed out" : check.outcome === SetupOutcome.aborted ? "was stopped" : `exited with ${check.exitCode ?? "a signal"}`;
    super(WorkspaceErrorCode.checkFailed, `the check \`${check.command}\` ${why} on the merged state; the parent was not changed. Its last output:\n${check.output.slice(-4_000)}`);
  }
}
