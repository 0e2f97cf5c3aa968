import { useState } from "react";
import type { OpenPullRequestOutput } from "../../src/contracts/workspaceQueries.js";
import { callApi, errorText } from "./api.js";

/**
 * "Open pull request" on a thread with a worktree branch (docs/workspaces.md,
 * "Pull requests"): commits the thread's changes on its branch, pushes it to
 * origin and opens the pull request with the GitHub CLI (`POST
 * /api/orchestration/threads/:id/pull-request`); the link is shown beside
 * the button, or why it could not be opened (no origin, no gh, gh's refusal).
 */
export function PullRequestAction(props: { readonly threadId: string; readonly base: string | null }) {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ readonly url: string } | { readonly error: string } | null>(null);
  const open = () => {
    setBusy(true);
    setSaid(null);
    callApi<OpenPullRequestOutput>("POST", `/api/orchestration/threads/${encodeURIComponent(props.threadId)}/pull-request`, {}).then(
      (result) => {
        setBusy(false);
        setSaid({ url: result.url });
      },
      (failure: unknown) => {
        setBusy(false);
        setSaid({ error: errorText(failure) });
      },
    );
  };
  return (
    <>
      <button disabled={busy} onClick={open} title={`Push this thread's branch and open a pull request${props.base === null ? "" : ` against ${props.base}`} with the GitHub CLI`}>
        Open pull request
      </button>
      {said === null ? null : "url" in said ? (
        <span className="small pr-result" role="status">
          Pull request: <a href={said.url} target="_blank" rel="noreferrer">{said.url}</a>
        </span>
      ) : (
        <span className="small error-text pr-result" role="status">
          {said.error}
        </span>
      )}
    </>
  );
}
