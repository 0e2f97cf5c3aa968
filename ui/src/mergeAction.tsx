import { useState } from "react";
import type { MergeIntoParentOutput } from "../../src/contracts/workspaceQueries.js";
import { callApi, errorText } from "./api.js";

/**
 * "Merge into parent" on a worktree child (docs/workspaces.md, merge into
 * the parent): commits the child's uncommitted changes on its branch and
 * merges the branch into the parent's checkout (`POST
 * /api/orchestration/threads/:id/merge-into-parent`). What happened is said
 * beside the button; a conflict's answer names its files.
 */
export function MergeAction(props: { readonly threadId: string; readonly parentTitle: string }) {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ readonly ok: boolean; readonly text: string } | null>(null);
  const merge = () => {
    setBusy(true);
    setSaid(null);
    callApi<MergeIntoParentOutput>("POST", `/api/orchestration/threads/${encodeURIComponent(props.threadId)}/merge-into-parent`, {}).then(
      (result) => {
        setBusy(false);
        const how = result.outcome === "up_to_date" ? "nothing new to merge" : result.outcome === "fast_forward" ? "fast-forward" : "merge commit";
        setSaid({ ok: true, text: `Merged into "${props.parentTitle}": ${how}, ${result.files.length} file${result.files.length === 1 ? "" : "s"}` });
      },
      (failure: unknown) => {
        setBusy(false);
        setSaid({ ok: false, text: errorText(failure) });
      },
    );
  };
  return (
    <>
      <button disabled={busy} onClick={merge} title={`Commit this thread's changes on its branch and merge them into "${props.parentTitle}"`}>
        Merge into parent
      </button>
      {said === null ? null : (
        <span className={said.ok ? "small merge-result" : "small error-text merge-result"} role="status">
          {said.text}
        </span>
      )}
    </>
  );
}
