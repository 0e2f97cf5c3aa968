import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { OpenPullRequestOutput } from "../../contracts/workspaceQueries.js";
import { gitSync, tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, ownerApi, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Open pull request (docs/workspaces.md, "Pull requests") through the real
 * server on a real git repository whose origin is a real bare repository:
 * the thread's changes are committed on its branch, the branch is pushed,
 * and `gh pr create` is run. GitHub cannot be reached here, so `gh` is a
 * stand-in script first on PATH that records its arguments and prints a
 * pull request URL, as the real CLI does on success; everything on Loom's
 * side of it is real.
 */

const FAKE_GH = `#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_GH_LOG"
echo "Creating pull request for the branch"
echo "https://github.com/example/repo/pull/7"
`;

let env: RepoHarness | null = null;
const savedPath = process.env.PATH;
const dirs: ReturnType<typeof tempDir>[] = [];
afterEach(async () => {
  process.env.PATH = savedPath;
  delete process.env.FAKE_GH_LOG;
  await env?.close();
  env = null;
  for (const dir of dirs.splice(0)) dir.remove();
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir.path;
}

interface Launched {
  readonly threadId: string;
  readonly runId: string;
  readonly branch: string;
  readonly worktreePath: string;
}

/** A bare origin beside the repository, and the stand-in gh first on PATH; returns the origin and gh's argument log. */
function withOriginAndGh(repo: string): { origin: string; log: string } {
  const dir = scratch("pr");
  const origin = join(dir, "origin.git");
  gitSync(dir, "init", "-q", "--bare", origin);
  gitSync(repo, "remote", "add", "origin", origin);
  mkdirSync(join(dir, "bin"));
  writeFileSync(join(dir, "bin", "gh"), FAKE_GH);
  chmodSync(join(dir, "bin", "gh"), 0o755);
  const log = join(dir, "gh.log");
  process.env.PATH = `${join(dir, "bin")}${delimiter}${savedPath ?? ""}`;
  process.env.FAKE_GH_LOG = log;
  return { origin, log };
}

async function worktreeThread(h: RepoHarness["h"], title: string): Promise<Launched> {
  const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", title, workspaceStrategy: "worktree", message: script({ write: { path: "fix.txt", content: "fixed\n" } }, { say: "Fixed." }) });
  expect((await h.waitForEnd(launched.runId)).status).toBe("completed");
  return launched;
}

const path = (threadId: string) => `/api/orchestration/threads/${encodeURIComponent(threadId)}/pull-request`;

describe("open a pull request for a worktree thread", () => {
  it("commits the thread's changes on its branch, pushes it to origin, runs gh pr create and links the pull request", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const { origin, log } = withOriginAndGh(repo);
    const launched = await worktreeThread(h, "Fix the login page");
    const opened = await ownerApi<OpenPullRequestOutput>(h, path(launched.threadId), { method: "POST", body: { body: "Fixes the login page." } });
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ threadId: launched.threadId, url: "https://github.com/example/repo/pull/7", branch: launched.branch, base: null });
    expect(opened.body.changesCommit).toMatch(/^[0-9a-f]{40}$/);
    // The branch on origin holds the committed change.
    expect(gitSync(origin, "show", `${launched.branch}:fix.txt`)).toBe("fixed");
    expect(gitSync(origin, "rev-parse", launched.branch)).toBe(opened.body.changesCommit);
    expect(readFileSync(log, "utf8").split("\n")).toEqual(["pr", "create", "--head", launched.branch, "--title", "Fix the login page", "--body", "Fixes the login page.", ""]);
    // Linked to the thread, as link_pull_request links it.
    expect(h.state.threads.get(launched.threadId)!.pullRequests).toEqual([expect.objectContaining({ url: "https://github.com/example/repo/pull/7", unlinkedAt: null })]);
  });

  it("says why it cannot: no worktree, no origin, no GitHub CLI; nothing is linked", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const plain = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { projectId: "repo", message: script({ say: "hi" }) });
    await h.waitForEnd(plain.runId);
    const noWorktree = await ownerApi<{ error: { code: string; message: string } }>(h, path(plain.threadId), { method: "POST", body: {} });
    expect(noWorktree.body.error).toMatchObject({ code: "workspace_unavailable", message: expect.stringContaining("no worktree and branch of its own") });

    const launched = await worktreeThread(h, "No origin yet");
    const noOrigin = await ownerApi<{ error: { code: string; message: string } }>(h, path(launched.threadId), { method: "POST", body: {} });
    expect(noOrigin.body.error).toMatchObject({ code: "workspace_unavailable", message: expect.stringContaining("has no origin remote") });

    const origin = join(scratch("pr-origin"), "origin.git");
    gitSync(repo, "init", "-q", "--bare", origin);
    gitSync(repo, "remote", "add", "origin", origin);
    // A PATH with git (and sh) but no gh.
    const bin = join(scratch("pr-bin"), "bin");
    mkdirSync(bin);
    for (const tool of ["git", "sh"]) symlinkSync(execFileSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(), join(bin, tool));
    process.env.PATH = bin;
    const noGh = await ownerApi<{ error: { code: string; message: string } }>(h, path(launched.threadId), { method: "POST", body: {} });
    process.env.PATH = savedPath;
    expect(noGh.body.error).toMatchObject({ code: "workspace_unavailable", message: "the GitHub CLI (gh) is not installed or not on PATH" });
    expect(h.state.threads.get(launched.threadId)!.pullRequests).toEqual([]);
    const bad = await ownerApi<{ error: { code: string } }>(h, path(launched.threadId), { method: "POST", body: { draft: "yes" } });
    expect([bad.status, bad.body.error.code]).toEqual([400, "invalid_request"]);
  });
});
