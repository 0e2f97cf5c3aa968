import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitBytes, gitSync, initRepo, readText, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { captureCheckpoint } from "./checkpoints.js";
import { WorkspaceErrorCode } from "./errors.js";
import { rollbackToCheckpoint } from "./rollback.js";

const SCOPE = "scope:rollback";
let dir: ReturnType<typeof tempDir>;
let repo: string;
let indexDir: string;

beforeEach(() => {
  dir = tempDir("rollback");
  repo = join(dir.path, "repo");
  indexDir = join(dir.path, "indexes");
});
afterEach(() => dir.remove());

async function capture(ordinal: number, workspacePath = repo, scopeId = SCOPE): Promise<void> {
  const result = await captureCheckpoint({ workspacePath, scopeId, ordinal, indexDir });
  if (result.status !== "ready") throw new Error(result.reason);
}

const rollback = (ordinal: number, force = false, workspacePath = repo, scopeId = SCOPE) =>
  rollbackToCheckpoint({ workspacePath, scopeId, ordinal, indexDir, force });

const MOVING = Array.from({ length: 20 }, (_, i) => `moving line ${i}`).join("\n") + "\n";

describe("rollbackToCheckpoint", () => {
  it("restores changed, deleted and renamed files and removes added ones, leaving HEAD, branch and index alone", async () => {
    initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n", "d.txt": MOVING });
    writeFiles(repo, { "a.txt": "uncommitted at checkpoint time\n" });
    await capture(0);
    writeFiles(repo, { "a.txt": "turn one\n", "b.txt": null, "newdir/c.txt": "added\n" });
    renameSync(join(repo, "d.txt"), join(repo, "e.txt"));
    await capture(1);
    const index = readFileSync(join(repo, ".git", "index"));
    const head = gitBytes(repo, "rev-parse", "HEAD");
    const headFile = readFileSync(join(repo, ".git", "HEAD"));

    const result = await rollback(0);
    expect(readText(repo, "a.txt")).toBe("uncommitted at checkpoint time\n");
    expect(readText(repo, "b.txt")).toBe("b\n");
    expect(readText(repo, "d.txt")).toBe(MOVING);
    expect(existsSync(join(repo, "e.txt"))).toBe(false);
    expect(existsSync(join(repo, "newdir"))).toBe(false);
    expect(result.overwritten).toEqual([]);
    expect(result.files.map((file) => [file.path, file.kind])).toEqual([
      ["a.txt", "modified"],
      ["b.txt", "added"],
      ["d.txt", "renamed"],
      ["newdir/c.txt", "deleted"],
    ]);
    expect(readFileSync(join(repo, ".git", "index"))).toEqual(index);
    expect(gitBytes(repo, "rev-parse", "HEAD")).toEqual(head);
    expect(readFileSync(join(repo, ".git", "HEAD"))).toEqual(headFile);
    expect(gitSync(repo, "status", "--porcelain")).toBe(" M a.txt");

    // The scope carries on from the restored state.
    await capture(2);
    const back = await rollback(1);
    expect(readText(repo, "a.txt")).toBe("turn one\n");
    expect(back.files.map((file) => file.path)).toContain("newdir/c.txt");
  });

  it("refuses to overwrite uncaptured changes, listing them, unless forced", async () => {
    initRepo(repo, { "a.txt": "a\n", "z.txt": "z\n" });
    await capture(0);
    writeFiles(repo, { "a.txt": "turn one\n" });
    await capture(1);
    writeFiles(repo, { "a.txt": "typed after the turn\n", "z.txt": "unrelated edit\n", "fresh.txt": "new, uncaptured\n" });

    const refused = rollback(0);
    await expect(refused).rejects.toMatchObject({ code: WorkspaceErrorCode.rollbackConflict, files: ["a.txt", "fresh.txt", "z.txt"] });
    expect(readText(repo, "a.txt")).toBe("typed after the turn\n");
    expect(readText(repo, "fresh.txt")).toBe("new, uncaptured\n");

    // Back out the unrelated edits: only a.txt stays in conflict.
    writeFiles(repo, { "z.txt": "z\n", "fresh.txt": null });
    await expect(rollback(0)).rejects.toMatchObject({ files: ["a.txt"] });

    const forced = await rollback(0, true);
    expect(forced.overwritten).toEqual(["a.txt"]);
    expect(readText(repo, "a.txt")).toBe("a\n");
  });

  it("refuses when an ignored file is in the way of a recreated one, and overwrites it when forced", async () => {
    initRepo(repo, { "keep.txt": "k\n" });
    writeFiles(repo, { "x.txt": "captured\n" });
    await capture(0);
    writeFiles(repo, { "x.txt": null, ".gitignore": "x.txt\n" });
    await capture(1);
    writeFiles(repo, { "x.txt": "ignored now\n" });

    await expect(rollback(0)).rejects.toMatchObject({ code: WorkspaceErrorCode.localChangesInTheWay, files: ["x.txt"] });
    expect(readText(repo, "x.txt")).toBe("ignored now\n");
    expect(existsSync(join(repo, ".gitignore"))).toBe(true);

    await rollback(0, true);
    expect(readText(repo, "x.txt")).toBe("captured\n");
    expect(existsSync(join(repo, ".gitignore"))).toBe(false);
  });

  it("never touches another worktree of the same repository", async () => {
    initRepo(repo, { "shared.txt": "base\n" });
    const other = join(dir.path, "other");
    gitSync(repo, "worktree", "add", "-q", "-b", "other", other);
    writeFiles(other, { "shared.txt": "other worktree's work\n" });
    await capture(0);
    await capture(0, other, "scope:other");
    writeFiles(repo, { "shared.txt": "main turn\n", "only-main.txt": "m\n" });
    await capture(1);

    await rollback(0);
    expect(readText(repo, "shared.txt")).toBe("base\n");
    expect(readText(other, "shared.txt")).toBe("other worktree's work\n");
    expect(gitSync(other, "status", "--porcelain")).toBe(" M shared.txt");
  });

  it("reports a checkpoint without a ref as not found", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    await capture(0);
    await expect(rollback(5)).rejects.toMatchObject({ code: WorkspaceErrorCode.refNotFound });
  });
});
