import { useEffect, useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { ThreadDiffOutput } from "../../src/contracts/workspaceQueries.js";
import { errorText } from "./api.js";
import { type DiffLayout, DiffView, LayoutToggle } from "./diffView.js";

/** What the diff panel shows: one turn's changes (its run), or the whole thread's (null). */
export interface DiffTarget {
  readonly runId: string | null;
  readonly label: string;
}

type Loaded = { readonly kind: "loading" } | { readonly kind: "failed"; readonly error: string } | { readonly kind: "ready"; readonly diff: ThreadDiffOutput };

/**
 * A turn's diff (orchestration.getTurnDiff) or the whole thread's
 * (getFullThreadDiff): the changed files with their counts, then the patch,
 * side by side or unified. The whole thread's also says which children
 * worked in worktrees of their own, so their changes are on their branches.
 */
export function DiffPanel(props: { readonly client: LoomWsClient; readonly threadId: string; readonly target: DiffTarget; readonly close: () => void; readonly open: (threadId: string) => void }) {
  const { client, threadId, target } = props;
  const [loaded, setLoaded] = useState<Loaded>({ kind: "loading" });
  const [layout, setLayout] = useState<DiffLayout>(() => (window.innerWidth >= 1100 ? "split" : "unified"));
  useEffect(() => {
    let current = true;
    setLoaded({ kind: "loading" });
    const request =
      target.runId === null
        ? client.request("orchestration.getFullThreadDiff", { threadId })
        : client.request("orchestration.getTurnDiff", { threadId, runId: target.runId });
    request.then(
      (diff) => current && setLoaded({ kind: "ready", diff }),
      (error: unknown) => current && setLoaded({ kind: "failed", error: errorText(error) }),
    );
    return () => {
      current = false;
    };
  }, [client, threadId, target.runId]);

  return (
    <section className="diff-panel" aria-label={`Diff: ${target.label}`}>
      <header className="diff-panel-head">
        <strong>{target.label}</strong>
        {loaded.kind === "ready" ? <DiffSummary diff={loaded.diff} /> : null}
        <span className="spacer" />
        <LayoutToggle layout={layout} setLayout={setLayout} />
        <button type="button" onClick={props.close} aria-label="Close the diff">
          Close
        </button>
      </header>
      <div className="diff-panel-body">
        {loaded.kind === "loading" ? <div className="muted">Loading the diff…</div> : null}
        {loaded.kind === "failed" ? <div className="error-text">{loaded.error}</div> : null}
        {loaded.kind === "ready" ? <ChildWork diff={loaded.diff} open={props.open} /> : null}
        {loaded.kind === "ready" ? (
          loaded.diff.files.length === 0 ? (
            <div className="muted">No changes.</div>
          ) : (
            <>
              <DiffView diff={loaded.diff.patch} layout={layout} />
              {loaded.diff.truncated ? (
                <div className="muted">The diff was cut; left out: {loaded.diff.omittedFiles.join(", ")}</div>
              ) : null}
            </>
          )
        ) : null}
      </div>
    </section>
  );
}

function DiffSummary({ diff }: { readonly diff: ThreadDiffOutput }) {
  const additions = diff.files.reduce((n, f) => n + f.additions, 0);
  const deletions = diff.files.reduce((n, f) => n + f.deletions, 0);
  return (
    <span className="muted diff-summary">
      {diff.files.length} file{diff.files.length === 1 ? "" : "s"} <span className="add">+{additions}</span> <span className="del">−{deletions}</span>
      {diff.toCheckpointId === null ? " (to the working tree now)" : ""}
    </span>
  );
}

/** Children whose changes are on their own branches: each with its branch, how many files it changed, and a link. */
function ChildWork({ diff, open }: { readonly diff: ThreadDiffOutput; readonly open: (threadId: string) => void }) {
  const children = diff.childWork ?? [];
  if (children.length === 0) return null;
  return (
    <div className="child-work" aria-label="Children's work">
      <div className="muted small">
        {children.length === 1 ? "A child works" : `${children.length} children work`} in a worktree of its own; their changes are on their branches, not in this diff:
      </div>
      <ul>
        {children.map((child) => (
          <li key={child.threadId}>
            <a
              href={`/t/${encodeURIComponent(child.threadId)}`}
              onClick={(e) => {
                e.preventDefault();
                open(child.threadId);
              }}
            >
              {child.title}
            </a>{" "}
            {child.branch === null ? null : <span className="pill branch-chip">⎇ {child.branch}</span>}{" "}
            <span className="muted small">
              {child.files} file{child.files === 1 ? "" : "s"} changed
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
