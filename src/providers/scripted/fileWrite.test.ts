import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileWriteError, countLineChanges, writeFileInCwd } from "./fileWrite.js";

describe("countLineChanges", () => {
  it.each([
    [null, "a\nb\n", 2, 0],
    [null, "", 0, 0],
    ["a\nb\nc\n", "a\nb\nc\n", 0, 0],
    ["a\nb\nc\n", "a\nB\nc\nd\n", 2, 1],
    ["a\nb\nc\n", "c\n", 0, 2],
    ["x\na\ny\nb\n", "a\nz\nb\n", 1, 2],
    ["a\nb", "a\nb\n", 0, 0],
  ])("%j → %j is +%i -%i", (before, after, additions, deletions) => {
    expect(countLineChanges(before, after)).toEqual({ additions, deletions });
  });
});

describe("writeFileInCwd", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "loom-write-"));
    await mkdir(join(root, "cwd"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("normalizes the reported path and reports add then update", async () => {
    const cwd = join(root, "cwd");
    expect(await writeFileInCwd(cwd, "./x/../y/f.txt", "1\n")).toEqual({ path: "y/f.txt", kind: "add", additions: 1, deletions: 0 });
    expect(await writeFileInCwd(cwd, "y/f.txt", "2\n")).toEqual({ path: "y/f.txt", kind: "update", additions: 1, deletions: 1 });
  });

  it("refuses a path that leaves the cwd through a symbolic link, creating nothing", async () => {
    const cwd = join(root, "cwd");
    await mkdir(join(root, "outside"));
    await symlink(join(root, "outside"), join(cwd, "link"));
    const error = await writeFileInCwd(cwd, "link/deep/f.txt", "x").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FileWriteError);
    expect(error).toMatchObject({ code: "path_outside_cwd" });
    await expect(readFile(join(root, "outside", "deep", "f.txt"))).rejects.toThrow();
  });

  it("refuses the cwd itself", async () => {
    await expect(writeFileInCwd(join(root, "cwd"), ".", "x")).rejects.toMatchObject({ code: "path_outside_cwd" });
  });
});
