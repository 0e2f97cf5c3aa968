import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitFiles, gitSync, initRepo, tempDir, writeFiles } from "../testkit/gitRepo.js";
import { isWorkspaceError } from "./errors.js";
import { git } from "./git.js";
import { parseFilesInTheWay } from "./gitMessages.js";

let dir: ReturnType<typeof tempDir>;
beforeEach(() => (dir = tempDir("messages")));
afterEach(() => dir.remove());

/** The message of a real `git read-tree -m -u` refusal in `repo`. */
async function refusal(repo: string, from: string, to: string): Promise<string> {
  const error: unknown = await git(["read-tree", "-m", "-u", from, to], { cwd: repo }).then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!isWorkspaceError(error)) throw new Error("expected git to refuse");
  return error.message;
}

describe("parseFilesInTheWay", () => {
  it("names the files in real git refusals", async () => {
    const repo = initRepo(join(dir.path, "repo"), { "a.txt": "a\n" }, "first");
    const first = gitSync(repo, "rev-parse", "HEAD");
    const second = commitFiles(repo, { "a.txt": "a2\n", "new file.txt": "n\n" });
    await git(["reset", "-q", "--hard", "HEAD~1"], { cwd: repo });

    writeFiles(repo, { "new file.txt": "untracked\n" });
    expect(parseFilesInTheWay(await refusal(repo, first, second))).toEqual(["new file.txt"]);
    writeFiles(repo, { "a.txt": "dirty\n" });
    expect(parseFilesInTheWay(await refusal(repo, first, second))).toEqual(["a.txt"]);
  });

  it("reads the list form of porcelain messages", () => {
    const message = [
      "error: Your local changes to the following files would be overwritten by merge:",
      "\ta.txt",
      "\tdir/b.txt",
      "Please commit your changes or stash them before you merge.",
    ].join("\n");
    expect(parseFilesInTheWay(message)).toEqual(["a.txt", "dir/b.txt"]);
  });
});
