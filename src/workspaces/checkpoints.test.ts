import { existsSync, readFileSync, realpathSync, renameSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitFiles, gitBytes, gitSync, initRepo, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { deleteCheckpointRefs, listCheckpointRecords } from "./checkpointRefs.js";
import { type CaptureResult, type ReadyCheckpoint, captureCheckpoint } from "./checkpoints.js";
import { WorkspaceErrorCode } from "./errors.js";
import { privateIndexPath } from "./privateIndex.js";
import { probeWorkingTree } from "./repository.js";
import { probeScope } from "./scopeProbe.js";

const SCOPE = "checkpointScope:1f2e";
let dir: ReturnType<typeof tempDir>;
let repo: string;
let indexDir: string;

beforeEach(() => {
  dir = tempDir("checkpoints");
  repo = join(dir.path, "repo");
  indexDir = join(dir.path, "indexes");
});
afterEach(() => dir.remove());

function ready(result: CaptureResult): ReadyCheckpoint {
  if (result.status !== "ready") throw new Error(`expected a ready checkpoint, got ${result.status}: ${result.reason}`);
  return result;
}

const capture = async (ordinal: number, workspacePath = repo) => ready(await captureCheckpoint({ workspacePath, scopeId: SCOPE, ordinal, indexDir }));

const OLD_TEXT = Array.from({ length: 20 }, (_, i) => `line ${i} of a file that moves`).join("\n") + "\n";

describe("captureCheckpoint", () => {
  it("sees a same-size edit made in the second the worktree's index was written, when the first capture comes later", async () => {
    // Git trusts an index entry's stat data only for files older than the index file. The first capture copies the
    // worktree's index; a copy with a fresh mtime would make the edit below look unchanged and snapshot the old text.
    // The clock is set back instead of waited for: the file and the worktree's index both read a minute ago, as when
    // the entry was written in the index's second; the copy would be stamped now, a later second.
    initRepo(repo, { "a.txt": "value 0\n" });
    const minuteAgo = new Date(Math.floor(Date.now() / 1_000) * 1_000 - 60_000);
    const file = join(repo, "a.txt");
    utimesSync(file, minuteAgo, minuteAgo);
    gitSync(repo, "add", "a.txt");
    utimesSync(join(repo, ".git", "index"), minuteAgo, minuteAgo);
    // The same size, and the entry's mtime kept: only the content says it changed.
    writeFiles(repo, { "a.txt": "value 1\n" });
    utimesSync(file, minuteAgo, minuteAgo);
    const checkpoint = await capture(0);
    expect(gitSync(repo, "show", `${checkpoint.ref}:a.txt`)).toBe("value 1");
  });

  it("records each turn's changes with kinds, line counts and binary marks, ignoring ignored files", async () => {
    initRepo(repo, {
      "a.txt": "one\ntwo\nthree\n",
      "b.txt": "gone soon\n",
      "old.txt": OLD_TEXT,
      "bin.dat": Buffer.from([0, 1, 2, 3]),
      ".gitignore": "ignored/\n*.log\n",
    });
    const head = gitSync(repo, "rev-parse", "HEAD");

    const first = await capture(0);
    expect(first.files).toEqual([]);
    expect(first.previous).toBeNull();
    expect(first.ref).toBe("refs/loom/checkpoints/checkpointScope%3A1f2e/0");
    expect(gitSync(repo, "rev-parse", first.ref)).toBe(first.commit);
    expect(gitSync(repo, "log", "-1", "--format=%P", first.commit)).toBe(head);

    writeFiles(repo, {
      "a.txt": "one\n2\nthree\nfour\nfive\n",
      "b.txt": null,
      "c.txt": "new\nfile\n",
      "bin.dat": Buffer.from([0, 9, 9, 9, 9]),
      "ignored/x.txt": "never captured\n",
      "debug.log": "never captured\n",
    });
    renameSync(join(repo, "old.txt"), join(repo, "new.txt"));
    const second = await capture(1);
    expect(second.previous).toEqual({ ordinal: 0, commit: first.commit });
    expect(gitSync(repo, "log", "-1", "--format=%P", second.commit)).toBe(first.commit);
    expect([...second.files].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { path: "a.txt", previousPath: null, kind: "modified", additions: 3, deletions: 1, binary: false },
      { path: "b.txt", previousPath: null, kind: "deleted", additions: 0, deletions: 1, binary: false },
      { path: "bin.dat", previousPath: null, kind: "modified", additions: 0, deletions: 0, binary: true },
      { path: "c.txt", previousPath: null, kind: "added", additions: 2, deletions: 0, binary: false },
      { path: "new.txt", previousPath: "old.txt", kind: "renamed", additions: 0, deletions: 0, binary: false },
    ]);
    expect(gitSync(repo, "show", `${second.commit}:c.txt`)).toBe("new\nfile");
    expect(gitSync(repo, "ls-tree", "-r", "--name-only", second.commit).split("\n")).not.toContain("debug.log");

    const third = await capture(2);
    expect(third.files).toEqual([]);
    expect(third.tree).toBe(second.tree);
    expect(third.commit).not.toBe(second.commit);
  });

  it("leaves the user's index, HEAD, branch, stash and status byte-identical", async () => {
    initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    writeFiles(repo, { "c.txt": "stashed\n" });
    gitSync(repo, "stash", "push", "-q", "-m", "keep me");
    writeFiles(repo, { "a.txt": "staged\n", "b.txt": "unstaged\n", "u.txt": "untracked\n" });
    gitSync(repo, "add", "a.txt");
    const snapshot = () => ({
      index: readFileSync(join(repo, ".git", "index")),
      headFile: readFileSync(join(repo, ".git", "HEAD")),
      head: gitBytes(repo, "rev-parse", "HEAD"),
      stash: gitBytes(repo, "stash", "list", "--format=%H %gs"),
      refs: gitBytes(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/stash"),
    });
    const status = () => gitBytes(repo, "status", "--porcelain=v2", "--branch", "--untracked-files=all");
    const before = snapshot();
    const statusBefore = status();

    await capture(0);
    writeFiles(repo, { "b.txt": "unstaged, edited again\n" });
    const statusMid = status();
    const second = await capture(1);

    expect(snapshot()).toEqual(before);
    expect(status()).toEqual(statusMid);
    expect(statusMid.toString()).toBe(statusBefore.toString());
    // b.txt's stat changed, not its status letters: the status lines are the same.
    expect(second.files.map((file) => file.path)).toEqual(["b.txt"]);
    expect(gitSync(repo, "show", `${second.commit}:a.txt`)).toBe("staged");
    expect(gitSync(repo, "show", `${second.commit}:u.txt`)).toBe("untracked");
    expect(existsSync(privateIndexPath(indexDir, SCOPE))).toBe(true);
  });

  it("keeps a file tracked despite an ignore rule, as the user's index does", async () => {
    initRepo(repo, { ".gitignore": "build/\n", "src.txt": "s\n" });
    writeFiles(repo, { "build/keep.txt": "forced\n" });
    gitSync(repo, "add", "-f", "build/keep.txt");
    gitSync(repo, "commit", "-q", "-m", "force-add");
    await capture(0);
    writeFiles(repo, { "build/keep.txt": "forced, changed\n", "build/other.txt": "ignored\n" });
    const second = await capture(1);
    expect(second.files.map((file) => file.path)).toEqual(["build/keep.txt"]);
  });

  it("answers missing with a reason for a folder that is not a git repository, does not exist or is bare", async () => {
    writeFiles(dir.path, { "plain/file.txt": "x\n" });
    const plain = await captureCheckpoint({ workspacePath: join(dir.path, "plain"), scopeId: SCOPE, ordinal: 0, indexDir });
    expect(plain).toMatchObject({ status: "missing", ref: null, files: [] });
    expect(plain.status === "missing" && plain.reason).toMatch(/not inside a git repository/);
    const absent = await captureCheckpoint({ workspacePath: join(dir.path, "absent"), scopeId: SCOPE, ordinal: 0, indexDir });
    expect(absent.status === "missing" && absent.reason).toMatch(/does not exist/);
    gitSync(dir.path, "init", "-q", "--bare", "bare.git");
    const bare = await captureCheckpoint({ workspacePath: join(dir.path, "bare.git"), scopeId: SCOPE, ordinal: 0, indexDir });
    expect(bare.status === "missing" && bare.reason).toMatch(/not in a working tree/);
  });

  it("probes a plain folder without running git, and sends every folder with a repository candidate to git", async () => {
    writeFiles(dir.path, { "plain/deep/file.txt": "x\n" });
    initRepo(repo);
    writeFiles(repo, { "sub/inner/file.txt": "x\n" });
    gitSync(dir.path, "init", "-q", "--bare", "bare.git");
    const path = process.env.PATH;
    process.env.PATH = join(dir.path, "no-git-here");
    try {
      // With no git on PATH, only an answer reached without git can succeed.
      expect(await probeWorkingTree(join(dir.path, "plain", "deep"))).toEqual({ tree: null, reason: `${join(dir.path, "plain", "deep")} is not inside a git repository` });
      await expect(probeWorkingTree(join(repo, "sub", "inner"))).rejects.toThrow(/cannot run git/);
      await expect(probeWorkingTree(join(dir.path, "bare.git", "refs"))).rejects.toThrow(/cannot run git/);
    } finally {
      process.env.PATH = path;
    }
    expect((await probeWorkingTree(join(repo, "sub", "inner"))).tree?.root).toBe(realpathSync(repo));
  });

  it("tells candidates from look-alikes without git: a .git file counts, a lone HEAD does not; a file or a missing path says so", async () => {
    // A linked worktree's `.git` is a file; a folder holding only a HEAD file is not a git dir.
    writeFiles(dir.path, { "linked/.git": "gitdir: /nowhere\n", "linked/deep/file.txt": "x\n", "headonly/HEAD": "ref: refs/heads/main\n", "headonly/sub/file.txt": "x\n" });
    const path = process.env.PATH;
    process.env.PATH = join(dir.path, "no-git-here");
    try {
      await expect(probeWorkingTree(join(dir.path, "linked", "deep"))).rejects.toThrow(/cannot run git/);
      const headOnly = join(dir.path, "headonly", "sub");
      expect(await probeWorkingTree(headOnly)).toEqual({ tree: null, reason: `${headOnly} is not inside a git repository` });
      const file = join(dir.path, "headonly", "sub", "file.txt");
      expect(await probeWorkingTree(file)).toEqual({ tree: null, reason: `${file} is not a directory` });
      const absent = join(dir.path, "absent", "deeper");
      expect(await probeWorkingTree(absent)).toEqual({ tree: null, reason: `${absent} does not exist` });
      expect(await probeScope(absent, SCOPE)).toEqual({ tree: null, reason: `${absent} does not exist`, refs: [] });
    } finally {
      process.env.PATH = path;
    }
  });

  it("captures a repository with no commit yet, every file added", async () => {
    initRepo(repo);
    writeFiles(repo, { "a.txt": "a\nb\n", "dir/b.txt": "b\n" });
    const first = await capture(0);
    expect(first.files.map((file) => [file.path, file.kind, file.additions])).toEqual([
      ["a.txt", "added", 2],
      ["dir/b.txt", "added", 1],
    ]);
    expect(gitSync(repo, "log", "-1", "--format=%P", first.commit)).toBe("");
    writeFiles(repo, { "a.txt": null });
    const second = await capture(1);
    expect(second.files).toEqual([{ path: "a.txt", previousPath: null, kind: "deleted", additions: 0, deletions: 2, binary: false }]);
    expect(() => gitSync(repo, "rev-parse", "--verify", "-q", "HEAD")).toThrow();
  });

  it("returns the stored checkpoint when an ordinal is captured again (replay)", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    await capture(0);
    writeFiles(repo, { "a.txt": "b\n" });
    const first = await capture(1);
    writeFiles(repo, { "a.txt": "c\n" });
    const replay = await capture(1);
    expect(replay).toEqual({ ...first, alreadyCaptured: true });
  });

  it("adds HEAD as a second parent once the user commits between captures", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const first = await capture(0);
    const second = await capture(1);
    expect(gitSync(repo, "log", "-1", "--format=%P", second.commit)).toBe(first.commit);
    const committed = commitFiles(repo, { "a.txt": "committed\n" });
    const third = await capture(2);
    expect(gitSync(repo, "log", "-1", "--format=%P", third.commit)).toBe(`${second.commit} ${committed}`);
    expect(third.files.map((file) => file.path)).toEqual(["a.txt"]);
  });

  it("serializes captures of one scope and lists and deletes its refs", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const results = await Promise.all([0, 1, 2].map((ordinal) => capture(ordinal)));
    expect(results.map((result) => result.ordinal)).toEqual([0, 1, 2]);
    const records = await listCheckpointRecords(repo, SCOPE);
    expect(records.map((record) => record.ordinal)).toEqual([0, 1, 2]);
    expect(await deleteCheckpointRefs(repo, SCOPE)).toBe(3);
    expect(await listCheckpointRecords(repo, SCOPE)).toEqual([]);
  });

  it("reads the scope in one git call as the plain probe and for-each-ref would", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    for (const ordinal of [0, 1, 2, 10]) await capture(ordinal);
    gitSync(repo, "update-ref", "refs/loom/checkpoints/checkpointScope%3A1f2e/not-an-ordinal", "HEAD");
    const fast = await probeScope(join(repo), SCOPE);
    const records = await listCheckpointRecords(repo, SCOPE);
    expect(fast.refs).toEqual(records.map(({ ordinal, ref, commit }) => ({ ordinal, ref, commit })));
    expect(fast.tree).toEqual((await probeWorkingTree(repo)).tree);

    const empty = join(dir.path, "empty");
    initRepo(empty);
    writeFiles(empty, { "x.txt": "x\n" });
    await capture(0, empty);
    const unborn = await probeScope(empty, SCOPE);
    expect(unborn.tree).toMatchObject({ head: null, branch: null });
    expect(unborn.refs.map((ref) => ref.ordinal)).toEqual([0]);
  });

  it("rejects a negative ordinal, an empty scope and an index folder inside the working tree", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    await expect(captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal: 0, indexDir: join(repo, "indexes") })).rejects.toMatchObject({
      code: WorkspaceErrorCode.invalidInput,
    });
    expect(await captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal: 0, indexDir: join(repo, ".git", "loom") })).toMatchObject({
      status: "ready",
      files: [],
    });
    await expect(captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal: -1, indexDir })).rejects.toMatchObject({
      code: WorkspaceErrorCode.invalidInput,
    });
    await expect(captureCheckpoint({ workspacePath: repo, scopeId: "", ordinal: 0, indexDir })).rejects.toMatchObject({
      code: WorkspaceErrorCode.invalidInput,
    });
  });
});
