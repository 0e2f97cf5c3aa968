import { useState } from "react";
import { HANDED_ON_WORKSPACE_CODES, type MergeIntoParentOutput } from "../../src/contracts/workspaceQueries.js";
import { ApiError, callApi, errorText } from "./api.js";

/**
 * "Merge into parent" on a worktree child (docs/workspaces.md, merge into
 * the parent): commits the child's uncommitted changes on its branch and
 * merges the branch into the parent's checkout (`POST
 * /api/orchestration/threads/:id/merge-into-parent`). What happened is said
 * beside the button; a conflict's answer names its files. A merge refused
 * for a conflict or a failed check (nothing changed) can then be handed back
 * to this thread as a run with what stood in the way (`onRefused: "child"`),
 * or to a resolver thread on this thread's provider instance working on the
 * merge in progress (`onRefused: "resolver"`).
 */

type Outcome = MergeIntoParentOutput["outcome"];
/** The refusals a merge can be handed on for: offered after one of these. */
const HANDED_ON: ReadonlySet<unknown> = new Set(HANDED_ON_WORKSPACE_CODES);

type Said = { readonly ok: boolean; readonly text: string; readonly open?: { readonly threadId: string; readonly label: string } };

/** What a merge that landed did, by its outcome. */
const LANDED: { readonly [O in Exclude<Outcome, "returned_to_child" | "handed_to_resolver">]: string } = {
  up_to_date: "nothing new to merge",
  fast_forward: "fast-forward",
  merge_commit: "merge commit",
};


function saidOf(result: MergeIntoParentOutput, parentTitle: string): Said {
  const files = (names: readonly string[]) => (names.length === 0 ? "" : ` (${names.join(", ")})`);
  switch (result.outcome) {
    case "returned_to_child":
      return { ok: true, text: `Not merged: handed back to this thread${files(result.returnedToChild?.files ?? [])}, with a run to resolve it; merge again once it is done` };
    case "handed_to_resolver":
      return {
        ok: true,
        text: `Not merged yet: a resolver works on the merge in progress${files(result.resolver?.files ?? [])}; it lands once the resolver is done`,
        ...(result.resolver === undefined ? {} : { open: { threadId: result.resolver.threadId, label: "Open the resolver →" } }),
      };
    default:
      return { ok: true, text: `Merged into "${parentTitle}": ${LANDED[result.outcome]}, ${result.files.length} file${result.files.length === 1 ? "" : "s"}` };
  }
}

export function MergeAction(props: { readonly threadId: string; readonly parentTitle: string; readonly resolverInstanceId: string | null; readonly open: (threadId: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<Said | null>(null);
  const [refused, setRefused] = useState(false);
  const merge = (how: Record<string, unknown>) => {
    setBusy(true);
    setSaid(null);
    setRefused(false);
    callApi<MergeIntoParentOutput>("POST", `/api/orchestration/threads/${encodeURIComponent(props.threadId)}/merge-into-parent`, how).then(
      (result) => {
        setBusy(false);
        setSaid(saidOf(result, props.parentTitle));
      },
      (failure: unknown) => {
        setBusy(false);
        setSaid({ ok: false, text: errorText(failure) });
        setRefused(failure instanceof ApiError && HANDED_ON.has(failure.details.workspaceCode));
      },
    );
  };
  return (
    <>
      <button disabled={busy} onClick={() => merge({})} title={`Commit this thread's changes on its branch and merge them into "${props.parentTitle}"`}>
        Merge into parent
      </button>
      {refused ? (
        <>
          <button disabled={busy} onClick={() => merge({ onRefused: "child" })} title="Merge again; if it is refused again, this thread gets a run with what stood in the way">
            Hand back to this thread
          </button>
          {props.resolverInstanceId === null ? null : (
            <button
              disabled={busy}
              onClick={() => merge({ onRefused: "resolver", resolver: { providerInstanceId: props.resolverInstanceId } })}
              title={`Merge again; if it is refused again, a resolver thread on ${props.resolverInstanceId} works on the merge in progress, and its result is merged, checked`}
            >
              Resolve with an agent
            </button>
          )}
        </>
      ) : null}
      {said === null ? null : (
        <span className={said.ok ? "small merge-result" : "small error-text merge-result"} role="status">
          {said.text}
          {said.open === undefined ? null : (
            <>
              {" "}
              <a
                href={`/t/${encodeURIComponent(said.open.threadId)}`}
                onClick={(e) => {
                  e.preventDefault();
                  props.open(said.open!.threadId);
                }}
              >
                {said.open.label}
              </a>
            </>
          )}
        </span>
      )}
    </>
  );
}
