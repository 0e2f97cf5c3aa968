import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitFiles, gitBytes, gitSync, initRepo, readText, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { captureCheckpoint } from "./checkpoints.js";
import { commitWorktreeChanges } from "./commitChanges.js";
import { WorkspaceErrorCode } from "./errors.js";
import { mergeChildWorktree } from "./merge.js";
import { createWorktree } from "./worktrees.js";

let dir: ReturnType<typeof tempDir>;
let repo: string;
let managedDir: string;

beforeEach(() => {
  dir = tempDir("merge");
  repo = join(dir.path, "repo");
  managedDir = join(dir.path, "managed");
});
afterEach(() => dir.remove());

async function child(threadId = "thread:child", baseRef?: string): Promise<string> {
  return (await createWorktree({ repoPath: repo, managedDir, threadId, baseRef })).path;
}

async function commitIn(worktreePath: string, files: Record<string, string | null>, message = "work"): Promise<string> {
  writeFiles(worktreePath, files);
  const result = await commitWorktreeChanges({ worktreePath, message });
  if (result.commit === null) throw new Error("nothing committed");
  return result.commit;
}

/** Everything about the parent a failed merge must leave alone. */
function parentState() {
  return {
    head: gitBytes(repo, "rev-parse", "HEAD"),
    branch: gitBytes(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main"),
    index: readFileSync(join(repo, ".git", "index")),
    status: gitBytes(repo, "status", "--porcelain=v2", "--untracked-files=all"),
    files: gitBytes(repo, "ls-files", "-s"),
    a: readFileSync(join(repo, "a.txt")),
  };
}

describe("mergeChildWorktree", () => {
  it("fast-forwards the parent to the child's commits, keeping unrelated local changes", async () => {
    initRepo(repo, { "a.txt": "a\n", "notes.txt": "n\n" });
    const before = gitSync(repo, "rev-parse", "HEAD");
    const path = await child();
    const childCommit = await commitIn(path, { "b.txt": "from child\n", "a.txt": "a, changed by child\n" });
    writeFiles(repo, { "notes.txt": "parent's own edit\n" });

    const result = await mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path });
    expect(result).toMatchObject({ outcome: "fast_forward", commit: childCommit, previousHead: before, childBranch: "loom/thread-child" });
    expect(result.files.map((file) => [file.path, file.kind])).toEqual([
      ["a.txt", "modified"],
      ["b.txt", "added"],
    ]);
    expect(gitSync(repo, "rev-parse", "main")).toBe(childCommit);
    expect(readText(repo, "b.txt")).toBe("from child\n");
    expect(readText(repo, "notes.txt")).toBe("parent's own edit\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe(" M notes.txt");

    expect(await mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path })).toMatchObject({ outcome: "up_to_date", commit: childCommit });
  });

  it("makes a merge commit when both sides moved", async () => {
    initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n" });
    const path = await child();
    const parentCommit = commitFiles(repo, { "a.txt": "parent\n" });
    const childCommit = await commitIn(path, { "b.txt": "child\n" });

    const result = await mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path, message: "merge the child" });
    expect(result.outcome).toBe("merge_commit");
    expect(gitSync(repo, "log", "-1", "--format=%P%n%s", "main")).toBe(`${parentCommit} ${childCommit}\nmerge the child`);
    expect(result.files.map((file) => file.path)).toEqual(["b.txt"]);
    expect(readText(repo, "a.txt")).toBe("parent\n");
    expect(readText(repo, "b.txt")).toBe("child\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  });

  it("reports conflicting files and leaves the parent exactly as it was", async () => {
    initRepo(repo, { "a.txt": "a\n", "c.txt": "c\n" });
    const path = await child();
    commitFiles(repo, { "a.txt": "parent's line\n", "c.txt": "parent c\n" });
    await commitIn(path, { "a.txt": "child's line\n", "c.txt": "child c\n" });
    writeFiles(repo, { "untracked.txt": "u\n" });
    const before = parentState();

    await expect(mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path })).rejects.toMatchObject({
      code: WorkspaceErrorCode.mergeConflict,
      files: ["a.txt", "c.txt"],
    });
    expect(parentState()).toEqual(before);
  });

  it("refuses when the parent's uncommitted files are in the way, changing nothing", async () => {
    initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n" });
    const path = await child();
    await commitIn(path, { "a.txt": "child\n", "new.txt": "child adds\n" });
    writeFiles(repo, { "a.txt": "parent, uncommitted\n", "new.txt": "parent, untracked\n" });
    const before = parentState();

    await expect(mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path })).rejects.toMatchObject({
      code: WorkspaceErrorCode.localChangesInTheWay,
      files: ["a.txt", "new.txt"],
    });
    expect(parentState()).toEqual(before);
  });

  it("overwrites an ignored file of the parent that is in the way, as git merge does", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const path = await child();
    await commitIn(path, { "build.out": "child's tracked output\n" });
    writeFiles(repo, { ".git/info/exclude": "build.out\n", "build.out": "parent's ignored output\n" });

    expect(await mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path })).toMatchObject({ outcome: "fast_forward" });
    expect(readText(repo, "build.out")).toBe("child's tracked output\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  });

  it("merges back a child started from the parent's checkpoint, uncommitted parent work included", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    writeFiles(repo, { "a.txt": "parent's uncommitted work\n", "draft.txt": "untracked draft\n" });
    const checkpoint = await captureCheckpoint({ workspacePath: repo, scopeId: "scope:parent", ordinal: 0, indexDir: join(dir.path, "indexes") });
    if (checkpoint.status !== "ready") throw new Error(checkpoint.reason);
    const path = await child("thread:child", checkpoint.ref);
    await commitIn(path, { "feature.txt": "child's feature\n" });
    await commitWorktreeChanges({ worktreePath: repo, message: "parent's work" });

    const result = await mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path });
    expect(result.outcome).toBe("merge_commit");
    expect(result.files.map((file) => file.path)).toEqual(["feature.txt"]);
    expect(readText(repo, "a.txt")).toBe("parent's uncommitted work\n");
    expect(readText(repo, "feature.txt")).toBe("child's feature\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  });

  it("refuses branches without shared history", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const path = await child();
    gitSync(path, "checkout", "-q", "--orphan", "orphan");
    await commitIn(path, { "a.txt": "unrelated\n" });
    await expect(mergeChildWorktree({ parentWorktreePath: repo, childWorktreePath: path })).rejects.toMatchObject({
      code: WorkspaceErrorCode.unrelatedHistories,
    });
  });
});

describe("commitWorktreeChanges", () => {
  it("commits tracked and untracked changes on the worktree's branch, or nothing when clean", async () => {
    initRepo(repo, { "a.txt": "a\n", ".gitignore": "*.log\n" });
    const path = await child();
    expect(await commitWorktreeChanges({ worktreePath: path, message: "nothing" })).toEqual({ commit: null, files: [] });
    writeFiles(path, { "a.txt": null, "b.txt": "b\n", "x.log": "ignored\n" });
    const result = await commitWorktreeChanges({ worktreePath: path, message: "child work" });
    expect(result.files.map((file) => [file.path, file.kind])).toEqual([
      ["a.txt", "deleted"],
      ["b.txt", "added"],
    ]);
    expect(gitSync(path, "rev-parse", "HEAD")).toBe(result.commit);
    expect(gitSync(path, "log", "-1", "--format=%an <%ae> %s")).toBe("Loom <loom@localhost> child work");
    expect(gitSync(path, "status", "--porcelain")).toBe("");
    await expect(commitWorktreeChanges({ worktreePath: path, message: " " })).rejects.toMatchObject({ code: WorkspaceErrorCode.invalidInput });
  });
});
