import { readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { initRepo, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { type CaptureResult, captureCheckpoint } from "./checkpoints.js";
import { DIFF_TRUNCATION_MARKER, diffCheckpoints, diffWorkspaceSince } from "./diffs.js";
import { WorkspaceErrorCode } from "./errors.js";

const SCOPE = "scope:diffs";
let dir: ReturnType<typeof tempDir>;
let repo: string;
let indexDir: string;

beforeEach(() => {
  dir = tempDir("diffs");
  repo = join(dir.path, "repo");
  indexDir = join(dir.path, "indexes");
});
afterEach(() => dir.remove());

async function capture(ordinal: number): Promise<string> {
  const result: CaptureResult = await captureCheckpoint({ workspacePath: repo, scopeId: SCOPE, ordinal, indexDir });
  if (result.status !== "ready") throw new Error(result.reason);
  return result.ref;
}

const MOVING = Array.from({ length: 20 }, (_, i) => `moving line ${i}`).join("\n") + "\n";

describe("diffCheckpoints", () => {
  it("gives a turn's unified diff with per-file stats", async () => {
    initRepo(repo, { "a.txt": "one\ntwo\n", "b.txt": "bye\n", "old.txt": MOVING, "img.bin": Buffer.from([0, 1, 2]) });
    const before = await capture(0);
    writeFiles(repo, { "a.txt": "one\n2\nthree\n", "b.txt": null, "n.txt": "new\n", "img.bin": Buffer.from([0, 7, 7]) });
    renameSync(join(repo, "old.txt"), join(repo, "moved.txt"));
    const after = await capture(1);

    const diff = await diffCheckpoints({ workspacePath: repo, from: before, to: after });
    expect(diff.truncated).toBe(false);
    expect(diff.omittedFiles).toEqual([]);
    expect(diff.files.map((file) => [file.path, file.kind, file.additions, file.deletions, file.binary])).toEqual([
      ["a.txt", "modified", 2, 1, false],
      ["b.txt", "deleted", 0, 1, false],
      ["img.bin", "modified", 0, 0, true],
      ["moved.txt", "renamed", 0, 0, false],
      ["n.txt", "added", 1, 0, false],
    ]);
    expect(diff.patch).toContain("diff --git a/a.txt b/a.txt\n");
    expect(diff.patch).toContain("-two\n+2\n+three\n");
    expect(diff.patch).toContain("deleted file mode 100644");
    expect(diff.patch).toContain("rename from old.txt\nrename to moved.txt\n");
    expect(diff.patch).toContain("Binary files a/img.bin and b/img.bin differ");
    expect(diff.patch).toContain("+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n");
  });

  it("cuts the patch between files at the byte cap and lists the files left out", async () => {
    const files = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}.txt`, "x\n"]));
    initRepo(repo, files);
    const before = await capture(0);
    writeFiles(repo, Object.fromEntries(Object.keys(files).map((path) => [path, `${"changed line\n".repeat(80)}`])));
    const after = await capture(1);

    const full = await diffCheckpoints({ workspacePath: repo, from: before, to: after });
    const sectionBytes = Buffer.byteLength(full.patch) / 5;
    const cut = await diffCheckpoints({ workspacePath: repo, from: before, to: after, maxBytes: Math.floor(sectionBytes * 2.5) });
    expect(cut.truncated).toBe(true);
    expect(cut.omittedFiles).toEqual(["f2.txt", "f3.txt", "f4.txt"]);
    expect(cut.files).toHaveLength(5);
    const [body, marker] = cut.patch.split(DIFF_TRUNCATION_MARKER);
    expect(Buffer.byteLength(body!)).toBeLessThanOrEqual(Math.floor(sectionBytes * 2.5));
    expect(body).toContain("diff --git a/f1.txt b/f1.txt");
    expect(body).not.toContain("f2.txt");
    expect(marker).toBe(` at ${Math.floor(sectionBytes * 2.5)} bytes: 3 of 5 files left out\n`);

    const none = await diffCheckpoints({ workspacePath: repo, from: before, to: after, maxBytes: 1 });
    expect(none.omittedFiles).toHaveLength(5);
    expect(none.patch.startsWith(DIFF_TRUNCATION_MARKER)).toBe(true);
  });

  it("stops reading a patch far larger than the cap", async () => {
    initRepo(repo, { "big.txt": "start\n" });
    const before = await capture(0);
    writeFiles(repo, { "big.txt": "a fairly long line of text that repeats\n".repeat(200_000) });
    const after = await capture(1);
    const diff = await diffCheckpoints({ workspacePath: repo, from: before, to: after, maxBytes: 4096 });
    expect(diff).toMatchObject({ truncated: true, omittedFiles: ["big.txt"] });
    expect(diff.files[0]).toMatchObject({ path: "big.txt", additions: 200_000, deletions: 1 });
  });

  it("rejects an unknown ref and a bad cap with typed errors", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    const ref = await capture(0);
    await expect(diffCheckpoints({ workspacePath: repo, from: ref, to: "refs/loom/checkpoints/none/9" })).rejects.toMatchObject({
      code: WorkspaceErrorCode.refNotFound,
    });
    await expect(diffCheckpoints({ workspacePath: repo, from: ref, to: ref, maxBytes: 0 })).rejects.toMatchObject({
      code: WorkspaceErrorCode.invalidInput,
    });
  });
});

describe("diffWorkspaceSince", () => {
  it("diffs from the scope's first checkpoint to the working tree, uncaptured changes included", async () => {
    initRepo(repo, { "a.txt": "a\n", "b.txt": "b\n" });
    await capture(0);
    writeFiles(repo, { "a.txt": "a, turn one\n" });
    await capture(1);
    writeFiles(repo, { "b.txt": null, "c.txt": "not captured yet\n" });
    const indexBefore = readFileSync(join(repo, ".git", "index"));

    const diff = await diffWorkspaceSince({ workspacePath: repo, scopeId: SCOPE, indexDir });
    expect(diff.toCommit).toBeNull();
    expect(diff.files.map((file) => [file.path, file.kind])).toEqual([
      ["a.txt", "modified"],
      ["b.txt", "deleted"],
      ["c.txt", "added"],
    ]);
    expect(diff.patch).toContain("+not captured yet\n");
    expect(readFileSync(join(repo, ".git", "index"))).toEqual(indexBefore);
  });

  it("refuses a scope without checkpoints", async () => {
    initRepo(repo, { "a.txt": "a\n" });
    await expect(diffWorkspaceSince({ workspacePath: repo, scopeId: "scope:none", indexDir })).rejects.toMatchObject({
      code: WorkspaceErrorCode.refNotFound,
    });
  });
});
