import { existsSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitFiles, gitSync, initRepo, readText, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { captureCheckpoint } from "./checkpoints.js";
import { WorkspaceErrorCode } from "./errors.js";
import { listGitWorktrees, listManagedWorktrees } from "./worktreeList.js";
import { createWorktree, pruneWorktrees, removeWorktree } from "./worktrees.js";

let dir: ReturnType<typeof tempDir>;
let repo: string;
let managedDir: string;

beforeEach(() => {
  dir = tempDir("worktrees");
  repo = join(dir.path, "repo");
  managedDir = join(dir.path, "managed");
});
afterEach(() => dir.remove());

describe("createWorktree", () => {
  it("creates a worktree on a new branch from HEAD in the managed folder and lists it with its thread", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const head = gitSync(repo, "rev-parse", "HEAD");
    const created = await createWorktree({ repoPath: repo, managedDir, threadId: "thread:1f2e" });
    expect(created).toEqual({ threadId: "thread:1f2e", path: join(managedDir, "thread-1f2e"), branch: "loom/thread-1f2e", baseCommit: head, baseRef: "HEAD" });
    expect(readText(created.path, "a.txt")).toBe("a\n");
    expect(gitSync(created.path, "symbolic-ref", "HEAD")).toBe("refs/heads/loom/thread-1f2e");
    expect(gitSync(created.path, "status", "--porcelain")).toBe("");

    gitSync(repo, "worktree", "add", "-q", "-b", "mine", join(dir.path, "mine"));
    const managed = await listManagedWorktrees(repo, managedDir);
    expect(managed).toEqual([
      { path: created.path, head, branch: "refs/heads/loom/thread-1f2e", main: false, locked: false, prunable: false, threadId: "thread:1f2e" },
    ]);
  });

  it("reports canonical real paths when the managed folder is reached through a symlink", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    writeFiles(dir.path, { "real/.keep": "" });
    symlinkSync(join(dir.path, "real"), join(dir.path, "link"));
    const created = await createWorktree({ repoPath: repo, managedDir: join(dir.path, "link"), threadId: "t" });
    expect(created.path).toBe(join(dir.path, "real", "t"));
    expect((await listManagedWorktrees(repo, join(dir.path, "link"))).map((worktree) => worktree.path)).toEqual([created.path]);
  });

  it("gives colliding thread slugs distinct branches and folders", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    gitSync(repo, "branch", "loom/thread-x");
    const first = await createWorktree({ repoPath: repo, managedDir, threadId: "thread:x" });
    const second = await createWorktree({ repoPath: repo, managedDir, threadId: "thread/x" });
    writeFiles(managedDir, { "thread-x-4/occupied.txt": "not a worktree\n" });
    gitSync(repo, "branch", "loom/thread-x-5");
    const third = await createWorktree({ repoPath: repo, managedDir, threadId: "thread x" });
    expect([first.branch, second.branch, third.branch]).toEqual(["loom/thread-x-2", "loom/thread-x-3", "loom/thread-x-6"]);
    expect(third.path).toBe(join(managedDir, "thread-x-6"));
  });

  it("lets parallel worktrees write the same path without conflict, each checkpointed apart", async () => {
    initRepo(repo, { "src/shared.ts": "export const value = 0;\n" });
    const [left, right] = await Promise.all(
      ["thread:left", "thread:right"].map((threadId) => createWorktree({ repoPath: repo, managedDir, threadId })),
    );
    writeFiles(left!.path, { "src/shared.ts": "export const value = 1;\n" });
    writeFiles(right!.path, { "src/shared.ts": "export const value = 2;\n" });
    const indexDir = join(dir.path, "indexes");
    const [l, r] = await Promise.all([
      captureCheckpoint({ workspacePath: left!.path, scopeId: "scope:left", ordinal: 0, indexDir }),
      captureCheckpoint({ workspacePath: right!.path, scopeId: "scope:right", ordinal: 0, indexDir }),
    ]);
    if (l.status !== "ready" || r.status !== "ready") throw new Error("expected ready checkpoints");
    expect(gitSync(repo, "show", `${l.ref}:src/shared.ts`)).toBe("export const value = 1;");
    expect(gitSync(repo, "show", `${r.ref}:src/shared.ts`)).toBe("export const value = 2;");
    expect(readText(repo, "src/shared.ts")).toBe("export const value = 0;\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  });

  it("starts a child from a checkpoint, so it sees its parent's uncommitted and untracked work", async () => {
    initRepo(repo, { "a.txt": "committed\n" });
    writeFiles(repo, { "a.txt": "uncommitted edit\n", "notes/new.txt": "untracked\n", "debug.log": "ignored\n", ".gitignore": "*.log\n" });
    const checkpoint = await captureCheckpoint({ workspacePath: repo, scopeId: "scope:parent", ordinal: 0, indexDir: join(dir.path, "indexes") });
    if (checkpoint.status !== "ready") throw new Error(checkpoint.reason);
    const child = await createWorktree({ repoPath: repo, managedDir, threadId: "thread:child", baseRef: checkpoint.ref });
    expect(child.baseCommit).toBe(checkpoint.commit);
    expect(readText(child.path, "a.txt")).toBe("uncommitted edit\n");
    expect(readText(child.path, "notes/new.txt")).toBe("untracked\n");
    expect(existsSync(join(child.path, "debug.log"))).toBe(false);
  });

  it("starts from origin/<branch> when that ref exists locally, else from the local branch", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const old = gitSync(repo, "rev-parse", "HEAD");
    const local = commitFiles(repo, { "a.txt": "local\n" });
    gitSync(repo, "branch", "feature", old);

    const noOrigin = await createWorktree({ repoPath: repo, managedDir, threadId: "t1", startFromOrigin: true });
    expect(noOrigin).toMatchObject({ baseCommit: local, baseRef: "HEAD" });

    gitSync(repo, "update-ref", "refs/remotes/origin/main", old);
    const fromOrigin = await createWorktree({ repoPath: repo, managedDir, threadId: "t2", startFromOrigin: true });
    expect(fromOrigin).toMatchObject({ baseCommit: old, baseRef: "refs/remotes/origin/main" });

    gitSync(repo, "update-ref", "refs/remotes/origin/feature", local);
    const feature = await createWorktree({ repoPath: repo, managedDir, threadId: "t3", baseRef: "feature", startFromOrigin: true });
    expect(feature).toMatchObject({ baseCommit: local, baseRef: "refs/remotes/origin/feature" });
    const plain = await createWorktree({ repoPath: repo, managedDir, threadId: "t4", baseRef: "feature" });
    expect(plain).toMatchObject({ baseCommit: old, baseRef: "feature" });
  });

  it("answers bad inputs with typed errors and creates nothing", async () => {
    initRepo(join(dir.path, "empty"));
    writeFiles(dir.path, { "plain/x.txt": "x\n" });
    initRepo(repo, { "a.txt": "a\n" });
    const cases = [
      [{ repoPath: join(dir.path, "empty") }, WorkspaceErrorCode.noCommits],
      [{ repoPath: join(dir.path, "plain") }, WorkspaceErrorCode.notARepository],
      [{ repoPath: join(dir.path, "absent") }, WorkspaceErrorCode.pathNotFound],
      [{ repoPath: repo, baseRef: "no-such-branch" }, WorkspaceErrorCode.refNotFound],
      [{ repoPath: repo, threadId: "" }, WorkspaceErrorCode.invalidInput],
      [{ repoPath: repo, branchPrefix: "../x/" }, WorkspaceErrorCode.invalidInput],
    ] as const;
    for (const [overrides, code] of cases) {
      await expect(createWorktree({ managedDir, threadId: "t", ...overrides })).rejects.toMatchObject({ code });
    }
    expect(await listManagedWorktrees(repo, managedDir)).toEqual([]);
    expect(gitSync(repo, "branch", "--list", "loom/*")).toBe("");
  });
});

describe("removeWorktree and pruneWorktrees", () => {
  it("refuses a dirty worktree, listing its files, then removes it with force and deletes its branch", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const created = await createWorktree({ repoPath: repo, managedDir, threadId: "t" });
    writeFiles(created.path, { "a.txt": "edited\n", "new.txt": "n\n", "x.log": "ignored\n", ".gitignore": "*.log\n" });
    await expect(removeWorktree({ repoPath: repo, managedDir, worktreePath: created.path })).rejects.toMatchObject({
      code: WorkspaceErrorCode.worktreeDirty,
      files: [".gitignore", "a.txt", "new.txt"],
    });
    expect(existsSync(created.path)).toBe(true);

    const removed = await removeWorktree({ repoPath: repo, managedDir, worktreePath: created.path, force: true, deleteBranch: true });
    expect(removed).toMatchObject({ path: created.path, branch: "refs/heads/loom/t", branchDeleted: true });
    expect(existsSync(created.path)).toBe(false);
    expect(gitSync(repo, "branch", "--list", "loom/*")).toBe("");
    expect(await listManagedWorktrees(repo, managedDir)).toEqual([]);
  });

  it("removes a clean worktree and keeps its branch unless asked", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const created = await createWorktree({ repoPath: repo, managedDir, threadId: "t" });
    expect(await removeWorktree({ repoPath: repo, managedDir, worktreePath: created.path })).toMatchObject({ branchDeleted: false });
    expect(gitSync(repo, "branch", "--list", "loom/*").trim()).toBe("loom/t");
  });

  it("never removes a worktree outside the managed folder", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const mine = join(dir.path, "mine");
    gitSync(repo, "worktree", "add", "-q", "-b", "mine", mine);
    await expect(removeWorktree({ repoPath: repo, managedDir, worktreePath: mine, force: true })).rejects.toMatchObject({
      code: WorkspaceErrorCode.notManaged,
    });
    await expect(removeWorktree({ repoPath: repo, managedDir, worktreePath: repo, force: true })).rejects.toMatchObject({
      code: WorkspaceErrorCode.notManaged,
    });
    await expect(removeWorktree({ repoPath: repo, managedDir, worktreePath: join(managedDir, "nope") })).rejects.toMatchObject({
      code: WorkspaceErrorCode.pathNotFound,
    });
    expect(existsSync(mine)).toBe(true);
  });

  it("prunes managed worktrees whose folder is gone and leaves other stale entries alone", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const gone = await createWorktree({ repoPath: repo, managedDir, threadId: "gone" });
    const kept = await createWorktree({ repoPath: repo, managedDir, threadId: "kept" });
    const mine = join(dir.path, "mine");
    gitSync(repo, "worktree", "add", "-q", "-b", "mine", mine);
    rmSync(gone.path, { recursive: true });
    rmSync(mine, { recursive: true });

    const pruned = await pruneWorktrees({ repoPath: repo, managedDir, deleteBranches: true });
    expect(pruned.map((worktree) => worktree.path)).toEqual([gone.path]);
    const remaining = await listGitWorktrees(repo);
    expect(remaining.map((worktree) => [worktree.path, worktree.prunable])).toEqual([
      [repo, false],
      [kept.path, false],
      [mine, true],
    ]);
    expect(gitSync(repo, "branch", "--list", "loom/*").replace(/\s+/g, " ").trim()).toBe("+ loom/kept");
  });
});
