import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitBytes, gitSync, initRepo, readText, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { CheckFailedError, mergeWithCheck } from "./checkedMerge.js";
import { commitWorktreeChanges } from "./commitChanges.js";
import { WorkspaceErrorCode } from "./errors.js";
import { createWorktree } from "./worktrees.js";

/** Test-gated merges on real repositories: the check runs on the merged state in a scratch worktree, and the parent moves only when it passes. */

let dir: ReturnType<typeof tempDir>;
let repo: string;
let managedDir: string;
let scratchDir: string;

beforeEach(() => {
  dir = tempDir("checked-merge");
  repo = join(dir.path, "repo");
  managedDir = join(dir.path, "managed");
  scratchDir = join(dir.path, "scratch");
});
afterEach(() => dir.remove());

async function childWith(threadId: string, files: Record<string, string>): Promise<string> {
  const path = (await createWorktree({ repoPath: repo, managedDir, threadId })).path;
  writeFiles(path, files);
  await commitWorktreeChanges({ worktreePath: path, message: `work of ${threadId}` });
  return path;
}

const parentState = () => ({ head: gitBytes(repo, "rev-parse", "HEAD"), index: readFileSync(join(repo, ".git", "index")), status: gitBytes(repo, "status", "--porcelain=v2", "--untracked-files=all") });

/** Passes when every `*.txt` file in the folder says "ok" on its first line. */
const CHECK = `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo "all ok in $(basename "$PWD")"`;

describe("mergeWithCheck", () => {
  it("runs the check on the merged state and fast-forwards the parent when it passes, keeping the scratch worktree for the next merge", async () => {
    initRepo(repo, { "a.txt": "ok\n" });
    const path = await childWith("thread:one", { "b.txt": "ok\n" });
    const result = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: path, check: CHECK, scratchDir, scratchName: "one" });
    expect(result.outcome).toBe("fast_forward");
    expect(result.check).toMatchObject({ outcome: "succeeded", exitCode: 0, output: "all ok in one\n" });
    expect(readText(repo, "b.txt")).toBe("ok\n");
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(result.commit);
    expect(readdirSync(scratchDir)).toEqual(["one"]);
    expect(gitSync(join(scratchDir, "one"), "rev-parse", "HEAD")).toBe(result.commit);
  });

  it("makes the merge commit of two disjoint children and checks both together", async () => {
    initRepo(repo, { "a.txt": "ok\n" });
    const one = await childWith("thread:one", { "b.txt": "ok\n" });
    const two = await childWith("thread:two", { "c.txt": "ok\n" });
    await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: one, check: CHECK, scratchDir, scratchName: "parent" });
    // The reused scratch worktree holds the second merge's state only: a file left there by hand is cleaned away first.
    writeFiles(join(scratchDir, "parent"), { "stray.txt": "broken\n" });
    const second = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: two, check: CHECK, scratchDir, scratchName: "parent" });
    expect(second.outcome).toBe("merge_commit");
    expect(gitSync(join(scratchDir, "parent"), "rev-parse", "HEAD")).toBe(second.commit);
    expect([readText(repo, "b.txt"), readText(repo, "c.txt")]).toEqual(["ok\n", "ok\n"]);
    expect(gitSync(repo, "rev-list", "--parents", "-n1", "HEAD").split(" ")).toHaveLength(3);
  });

  it("leaves the parent exactly as it was when the check fails, and says why with the check's output", async () => {
    initRepo(repo, { "a.txt": "ok\n" });
    const path = await childWith("thread:bad", { "b.txt": "broken\n" });
    writeFiles(repo, { "notes.md": "the parent's own uncommitted note\n" });
    const before = parentState();
    const failed = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: path, check: CHECK, scratchDir, scratchName: "bad" }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(CheckFailedError);
    const error = failed as CheckFailedError;
    expect(error.code).toBe(WorkspaceErrorCode.checkFailed);
    expect(error.check).toMatchObject({ outcome: "failed", exitCode: 1, output: "b.txt is not ok\n" });
    expect(error.message).toContain("b.txt is not ok");
    expect(parentState()).toEqual(before);
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
  });

  it("runs the setup first in the scratch worktree; a failing setup fails the merge like its check", async () => {
    initRepo(repo, { "a.txt": "ok\n", ".gitignore": "generated.txt\n" });
    const path = await childWith("thread:one", { "b.txt": "ok\n" });
    const needsSetup = `test -f generated.txt && ${CHECK}`;
    const result = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: path, setup: "echo ok > generated.txt", check: needsSetup, scratchDir, scratchName: "one" });
    expect(result.check).toMatchObject({ command: needsSetup, exitCode: 0 });
    const other = await childWith("thread:two", { "c.txt": "ok\n" });
    const before = parentState();
    await expect(mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: other, setup: "echo no network; exit 7", check: CHECK, scratchDir, scratchName: "two" })).rejects.toMatchObject({
      code: WorkspaceErrorCode.checkFailed,
      check: { command: "echo no network; exit 7", exitCode: 7, output: "no network\n" },
    });
    expect(parentState()).toEqual(before);
  });

  it("refuses a conflict before running anything, and an empty check", async () => {
    initRepo(repo, { "a.txt": "ok\n" });
    const one = await childWith("thread:one", { "a.txt": "ok\none\n" });
    const two = await childWith("thread:two", { "a.txt": "ok\ntwo\n" });
    await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: one, check: CHECK, scratchDir, scratchName: "one" });
    const before = parentState();
    const conflict = await mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: two, check: "touch ran; exit 0", scratchDir, scratchName: "two" }).catch((error: unknown) => error);
    expect(conflict).toMatchObject({ code: WorkspaceErrorCode.mergeConflict, files: ["a.txt"] });
    expect(parentState()).toEqual(before);
    expect(existsSync(join(scratchDir, "two"))).toBe(false);
    await expect(mergeWithCheck({ parentWorktreePath: repo, childWorktreePath: two, check: "  ", scratchDir, scratchName: "x" })).rejects.toMatchObject({ code: WorkspaceErrorCode.invalidInput });
  });
});
