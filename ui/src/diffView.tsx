import { type ReactNode, useMemo } from "react";
import { Diff, type FileData, Hunk, type ViewType, parseDiff } from "react-diff-view";
import "react-diff-view/style/index.css";

export type DiffLayout = ViewType;

/**
 * A patch in git's unified format, parsed and rendered by react-diff-view
 * (side by side or unified). A per-file diff without git's headers (a
 * file_change item's) gets them first; a patch that still does not parse (a
 * binary note, a truncation marker alone) shows as plain text.
 */
function withHeaders(patch: string, path: string | undefined): string {
  if (path === undefined || patch.startsWith("diff --git")) return patch;
  const files = patch.startsWith("--- ") ? "" : `--- a/${path}\n+++ b/${path}\n`;
  return `diff --git a/${path} b/${path}\n${files}${patch}`;
}

function parsed(patch: string, path: string | undefined): FileData[] {
  try {
    return parseDiff(withHeaders(patch, path), { nearbySequences: "zip" });
  } catch {
    return [];
  }
}

function fileTitle(file: FileData): string {
  if (file.type === "rename") return `${file.oldPath} → ${file.newPath}`;
  return file.type === "delete" ? file.oldPath : file.newPath;
}

export function DiffView({ diff, path, layout = "unified" }: { readonly diff: string; readonly path?: string; readonly layout?: DiffLayout }) {
  const files = useMemo(() => parsed(diff, path), [diff, path]);
  if (files.length === 0 || files.every((f) => f.hunks.length === 0 && f.type === "modify")) return <PlainDiff diff={diff} />;
  return (
    <div className="diff-files" data-layout={layout}>
      {files.map((file, i) => (
        <section key={`${file.oldPath}:${file.newPath}:${i}`} className="diff-file" data-path={fileTitle(file)}>
          {path === undefined ? (
            <header className="diff-file-head">
              <code>{fileTitle(file)}</code> <span className="muted">{file.type}</span>
            </header>
          ) : null}
          {file.hunks.length === 0 ? (
            <div className="muted diff-empty">no text changes (binary or mode only)</div>
          ) : (
            <Diff viewType={layout} diffType={file.type} hunks={file.hunks}>
              {(hunks) => hunks.map((hunk) => <Hunk key={hunk.content} hunk={hunk} />)}
            </Diff>
          )}
        </section>
      ))}
    </div>
  );
}

/** A patch that did not parse, each line colored by its kind. */
function PlainDiff({ diff }: { readonly diff: string }): ReactNode {
  return (
    <pre className="diff">
      {diff.split("\n").map((line, i) => {
        const kind = line.startsWith("+++") || line.startsWith("---") ? "meta" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
        return (
          <span key={i} className={`diff-${kind}`}>
            {line}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}

/** Side by side or unified, as two toggle buttons. */
export function LayoutToggle({ layout, setLayout }: { readonly layout: DiffLayout; readonly setLayout: (layout: DiffLayout) => void }) {
  return (
    <span className="layout-toggle" role="group" aria-label="Diff layout">
      <button type="button" className={layout === "split" ? "chosen" : ""} aria-pressed={layout === "split"} onClick={() => setLayout("split")}>
        Side by side
      </button>
      <button type="button" className={layout === "unified" ? "chosen" : ""} aria-pressed={layout === "unified"} onClick={() => setLayout("unified")}>
        Unified
      </button>
    </span>
  );
}
