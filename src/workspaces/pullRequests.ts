import { execFile } from "node:child_process";
import { git, gitText } from "./git.js";

/**
 * Open a pull request for a worktree's branch with the GitHub CLI: push the
 * branch to `origin` (setting its upstream), then `gh pr create`, whose last
 * line of output is the pull request's URL. gh uses its own login; nothing
 * Loom holds is passed to it.
 */

/** How long `gh pr create` may take. */
const GH_TIMEOUT_MS = 60_000;

export interface PullRequestRequest {
  readonly worktreePath: string;
  readonly branch: string;
  readonly base: string | null;
  readonly title: string;
  readonly body: string;
  readonly draft: boolean;
  /** The GitHub CLI to run; "gh" from PATH by default. */
  readonly ghCommand?: string;
}

/** What stands in the way outside git: no origin remote, no GitHub CLI, or gh refusing (not logged in, a pull request already open). */
export class PullRequestUnavailable extends Error {
  override readonly name = "PullRequestUnavailable";
}

export async function openPullRequest(request: PullRequestRequest): Promise<{ readonly url: string }> {
  const remotes = (await gitText(["remote"], { cwd: request.worktreePath })).split("\n");
  if (!remotes.includes("origin")) throw new PullRequestUnavailable(`the repository of ${request.worktreePath} has no origin remote to push ${request.branch} to`);
  await git(["push", "--set-upstream", "origin", `${request.branch}:${request.branch}`], { cwd: request.worktreePath });
  const gh = request.ghCommand ?? "gh";
  const args = ["pr", "create", "--head", request.branch, "--title", request.title, "--body", request.body, ...(request.base === null ? [] : ["--base", request.base]), ...(request.draft ? ["--draft"] : [])];
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(gh, args, { cwd: request.worktreePath, timeout: GH_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error, out, err) => {
      if (error === null) return resolve(out);
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      reject(new PullRequestUnavailable(missing ? `the GitHub CLI (${gh}) is not installed or not on PATH` : `${gh} pr create failed: ${(err.trim() || error.message).slice(0, 2_000)}`));
    });
  });
  const url = stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (!/^https?:\/\/\S+$/.test(url)) throw new PullRequestUnavailable(`${gh} pr create answered no pull request URL: ${stdout.trim().slice(0, 500)}`);
  return { url };
}
