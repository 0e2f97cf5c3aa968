import type { OpenPullRequestInput, OpenPullRequestOutput } from "../../contracts/workspaceQueries.js";
import { activeRunOf } from "../../engine/queries.js";
import { commitWorktreeChanges } from "../../workspaces/commitChanges.js";
import { PullRequestUnavailable, openPullRequest as ghOpenPullRequest } from "../../workspaces/pullRequests.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { linkPullRequest } from "../threads/writes.js";
import { asAppFailure } from "./failures.js";

/**
 * Open a pull request for a worktree thread's branch (owner only;
 * docs/workspaces.md, "Pull requests"): commit its uncommitted changes on the
 * branch, push the branch to origin, `gh pr create` against the parent's
 * branch (or the base given, else the repository's default), and link the
 * pull request to the thread as link_pull_request does. Nothing is linked
 * when a step fails; the failure says which.
 */
export async function openThreadPullRequest(ctx: AppContext, caller: Caller, input: OpenPullRequestInput): Promise<OpenPullRequestOutput> {
  if (caller.kind !== "owner") fail("capability_denied", "only the owner may open a pull request for a thread");
  const state = ctx.orchestrator.state;
  const thread = state.threads.get(input.threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `thread ${input.threadId} does not exist`);
  if (thread.worktreePath === null || thread.branch === null) fail("workspace_unavailable", `thread ${thread.id} has no worktree and branch of its own to open a pull request from`);
  const run = activeRunOf(state, thread.id);
  if (run !== null) fail("workspace_busy", `thread ${thread.id} has an active run (${run.id}); open the pull request once it ends`);
  const parent = thread.lineage.parentThreadId === null ? undefined : state.threads.get(thread.lineage.parentThreadId);
  const base = input.base ?? parent?.branch ?? null;
  const { worktreePath, branch } = thread;
  const committed = await asAppFailure(() => commitWorktreeChanges({ worktreePath, message: `loom: changes of thread ${thread.id}\n` }));
  let url: string;
  try {
    ({ url } = await asAppFailure(() => ghOpenPullRequest({ worktreePath, branch, base, title: input.title ?? thread.title, body: input.body ?? "", draft: input.draft ?? false })));
  } catch (error) {
    if (error instanceof PullRequestUnavailable) fail("workspace_unavailable", error.message);
    throw error;
  }
  await linkPullRequest(ctx, caller, { threadId: thread.id, url, title: input.title ?? thread.title });
  return { threadId: thread.id, url, branch, base, changesCommit: committed.commit };
}
