import { type DragEvent, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { SearchHitView } from "../../src/contracts/tools/searchTools.js";
import type { ShellWorkflow, ThreadShell } from "../../src/contracts/wire/projections.js";
import { dispatch, errorText } from "./api.js";
import { movePinned, pinnedOrder, stepPinned } from "./pinOrder.js";
import { SearchResults } from "./searchResults.js";
import { BADGE_LABEL, type BadgeKind, badgeOf, isLive, needsYou, withWorkingChildren } from "./status.js";
import { ROOT_PAGE, rootOf, windowRoots } from "./sidebarWindow.js";
import { TreeRollupLine } from "./treeRollup.js";

interface TreeNode {
  readonly row: ThreadShell;
  readonly children: TreeNode[];
}

/** Roots pinned first (by pin rank), then active (by rank), then newest first; children oldest first. */
function compareRoots(a: ThreadShell, b: ThreadShell): number {
  if ((a.pinnedRank === null) !== (b.pinnedRank === null)) return a.pinnedRank === null ? 1 : -1;
  if (a.pinnedRank !== null && b.pinnedRank !== null) return a.pinnedRank - b.pinnedRank;
  if ((a.activeRank === null) !== (b.activeRank === null)) return a.activeRank === null ? 1 : -1;
  if (a.activeRank !== null && b.activeRank !== null) return a.activeRank - b.activeRank;
  return b.updatedAt.localeCompare(a.updatedAt);
}

/** Projects, each with its lineage forest: subagents and forks under their parent. */
export function buildForest(rows: Iterable<ThreadShell>): Map<string, TreeNode[]> {
  const nodes = new Map<string, TreeNode>();
  for (const row of rows) nodes.set(row.id, { row, children: [] });
  const byProject = new Map<string, TreeNode[]>();
  for (const node of nodes.values()) {
    const parent = node.row.parentThreadId === null ? undefined : nodes.get(node.row.parentThreadId);
    if (parent !== undefined) parent.children.push(node);
    else {
      const roots = byProject.get(node.row.projectId);
      if (roots === undefined) byProject.set(node.row.projectId, [node]);
      else roots.push(node);
    }
  }
  for (const node of nodes.values()) node.children.sort((a, b) => a.row.createdAt.localeCompare(b.row.createdAt));
  for (const roots of byProject.values()) roots.sort((a, b) => compareRoots(a.row, b.row));
  return byProject;
}

/** "3 running, 1 needs you": what a collapsed subtree hides. */
function rollUp(node: TreeNode): string {
  const counts = new Map<string, number>();
  const walk = (n: TreeNode) => {
    for (const child of n.children) {
      const badge = badgeOf(child.row);
      const key = needsYou(badge) ? "need you" : isLive(badge) ? "running" : null;
      if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
      walk(child);
    }
  };
  walk(node);
  return [...counts].map(([k, n]) => `${n} ${k === "need you" && n === 1 ? "needs you" : k}`).join(", ");
}

/** What a tree's roll-up depends on: every thread's status and wait, so a thread starting, ending or waiting re-reads it. */
function treeVersion(node: TreeNode): string {
  const parts: string[] = [];
  const walk = (n: TreeNode) => {
    parts.push(`${n.row.id}:${n.row.runStatus ?? "-"}:${n.row.inWait ? "w" : ""}`);
    n.children.forEach(walk);
  };
  walk(node);
  return parts.join(",");
}

export function Badge({ kind }: { readonly kind: BadgeKind }) {
  return <span className={`badge badge-${kind}`}>{BADGE_LABEL[kind]}</span>;
}

const WORKFLOW_WORD: Record<ShellWorkflow["status"], string> = { running: "running", completed: "done", failed: "failed", stopped: "stopped" };

/** The thread's workflow at a glance: its steps done while it runs, how it ended after. */
function WorkflowMark(props: { readonly workflow: ShellWorkflow }) {
  const { workflow } = props;
  const steps = `${workflow.stepsDone}/${workflow.stepsTotal} step${workflow.stepsTotal === 1 ? "" : "s"}`;
  const name = workflow.name === null ? "Workflow" : `Workflow ${workflow.name}`;
  return (
    <span className={`workflow-mark workflow-mark-${workflow.status}`} title={`${name}: ${WORKFLOW_WORD[workflow.status]}, ${steps} done`} data-testid="workflow-mark">
      ⚙ {workflow.status === "running" ? `${workflow.stepsDone}/${workflow.stepsTotal}` : WORKFLOW_WORD[workflow.status]}
    </span>
  );
}

/** Moving pinned threads: by dragging a pinned row onto another, or Alt+↑ / Alt+↓ on a focused one. */
interface PinMoves {
  moveTo(id: string, target: string, after: boolean): void;
  step(id: string, step: -1 | 1): void;
}

const DRAG_TYPE = "application/x-loom-thread";

/** Whether a drag over `e`'s row would drop below its middle. */
function belowMiddle(e: DragEvent<HTMLElement>): boolean {
  const box = e.currentTarget.getBoundingClientRect();
  return e.clientY > box.top + box.height / 2;
}

function Row({ node, depth, selected, cursor, open, pins }: { node: TreeNode; depth: number; selected: string | null; cursor: string | null; open: (id: string) => void; pins: PinMoves | null }) {
  const [expanded, setExpanded] = useState(true);
  const [dropAt, setDropAt] = useState<"before" | "after" | null>(null);
  const { row } = node;
  const movable = pins !== null && row.pinnedRank !== null;
  const badge = withWorkingChildren(badgeOf(row), node.children.map((child) => badgeOf(child.row)));
  // A root shows its whole tree's roll-up (TreeRollupLine); a collapsed node below it what it hides.
  const root = depth === 0 && row.parentThreadId === null;
  const summary = expanded || root ? "" : rollUp(node);
  const version = useMemo(() => (root ? treeVersion(node) : ""), [root, node]);
  return (
    <li>
      <div
        className={`tree-row${row.id === selected ? " selected" : ""}${row.id === cursor ? " cursor-row" : ""}${dropAt === null ? "" : ` drop-${dropAt}`}`}
        aria-current={row.id === cursor ? "true" : undefined}
        style={{ paddingLeft: `${8 + depth * 14}px` }}
        data-thread-id={row.id}
        draggable={movable}
        onDragStart={movable ? (e) => { e.dataTransfer.setData(DRAG_TYPE, row.id); e.dataTransfer.effectAllowed = "move"; } : undefined}
        onDragOver={movable ? (e) => {
          if (!e.dataTransfer.types.includes(DRAG_TYPE)) return;
          e.preventDefault();
          e.dataTransfer.dropEffect = "move";
          setDropAt(belowMiddle(e) ? "after" : "before");
        } : undefined}
        onDragLeave={movable ? () => setDropAt(null) : undefined}
        onDrop={movable ? (e) => {
          e.preventDefault();
          setDropAt(null);
          const dragged = e.dataTransfer.getData(DRAG_TYPE);
          if (dragged !== "") pins.moveTo(dragged, row.id, belowMiddle(e));
        } : undefined}
      >
        {node.children.length > 0 ? (
          <button className="twisty" aria-label={expanded ? "collapse" : "expand"} aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
            {expanded ? "▾" : "▸"}
          </button>
        ) : (
          <span className="twisty-space" />
        )}
        <a
          href={`/t/${encodeURIComponent(row.id)}`}
          className="tree-link"
          title={movable ? "Drag, or Alt+↑ / Alt+↓, to reorder the pinned threads" : undefined}
          onClick={(e) => {
            e.preventDefault();
            open(row.id);
          }}
          onKeyDown={movable ? (e) => {
            if (!e.altKey || (e.key !== "ArrowUp" && e.key !== "ArrowDown")) return;
            e.preventDefault();
            pins.step(row.id, e.key === "ArrowUp" ? -1 : 1);
          } : undefined}
        >
          {row.unread ? <span className="unread-dot" aria-label="unread" /> : null}
          {row.pinnedRank !== null ? (
            <svg className="pin-mark" aria-label="pinned" role="img" viewBox="0 0 16 16" width="11" height="11">
              <path d="M10 1l5 5-2 1-3 3 1 4-1 1-3.5-3.5L2 16l-1-1 4.5-4.5L2 7l1-1 4 1 3-3z" fill="currentColor" />
            </svg>
          ) : null}
          <span className="tree-title">{row.title || "(untitled)"}</span>
        </a>
        {row.workflow === null ? null : <WorkflowMark workflow={row.workflow} />}
        <Badge kind={badge} />
      </div>
      {root ? <TreeRollupLine rootThreadId={row.id} version={version} depth={depth} /> : null}
      {summary !== "" ? <div className="rollup" style={{ paddingLeft: `${30 + depth * 14}px` }}>{summary}</div> : null}
      {expanded && node.children.length > 0 ? (
        <ul>
          {node.children.map((child) => (
            <Row key={child.row.id} node={child} depth={depth + 1} selected={selected} cursor={cursor} open={open} pins={pins} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** The end of a windowed list: it grows the window when scrolled into view, or on a click. */
function MoreRoots(props: { readonly hidden: number; readonly more: () => void }) {
  const end = useRef<HTMLButtonElement>(null);
  const { more } = props;
  useEffect(() => {
    const element = end.current;
    if (element === null) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) more();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [more, props.hidden]);
  return (
    <button ref={end} className="more-roots" onClick={more} data-testid="more-roots">
      Show more ({props.hidden.toLocaleString("en-US")} more thread{props.hidden === 1 ? "" : "s"})
    </button>
  );
}

export function Sidebar(props: {
  readonly threads: ReadonlyMap<string, ThreadShell>;
  /** Only the list's first page is held yet: the window's end waits for the rest. */
  readonly partial: boolean;
  readonly selected: string | null;
  /** The keyboard cursor (j/k). */
  readonly cursor: string | null;
  readonly open: (id: string) => void;
  /** Open a search hit's thread at its item. */
  readonly jump: (hit: SearchHitView) => void;
  readonly onNewThread: () => void;
  readonly showArchived: boolean;
  readonly setShowArchived: (value: boolean) => void;
  readonly client: LoomWsClient;
  readonly navigate: (path: string) => void;
  readonly path: string;
}) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<readonly SearchHitView[]>([]);
  const forest = useMemo(() => {
    const q = query.trim().toLowerCase();
    const rows = [...props.threads.values()].filter((row) => q === "" || row.title.toLowerCase().includes(q) || row.id.toLowerCase().includes(q));
    return buildForest(rows);
  }, [props.threads, query]);
  const [limit, setLimit] = useState(ROOT_PAGE);
  const more = useCallback(() => setLimit((n) => n + ROOT_PAGE), []);
  const keepKey = `${rootOf(props.threads, props.selected) ?? ""}\n${rootOf(props.threads, props.cursor) ?? ""}`;
  const windowed = useMemo(() => windowRoots(forest, limit, new Set(keepKey.split("\n").filter((id) => id !== ""))), [forest, limit, keepKey]);
  // Reordering pins sends the whole new order (thread.pin.reorder); the shell's upserts then move the rows.
  const [pinError, setPinError] = useState<string | null>(null);
  const refocus = useRef<string | null>(null);
  const { client, showArchived, threads } = props;
  const pins = useMemo<PinMoves | null>(() => {
    if (showArchived) return null;
    const send = (id: string, next: string[] | null) => {
      if (next === null) return;
      refocus.current = id;
      setPinError(null);
      dispatch(client, "thread.pin.reorder", { threadIds: next }).catch((e: unknown) => setPinError(errorText(e)));
    };
    return {
      moveTo: (id, target, after) => send(id, movePinned(pinnedOrder(threads.values()), id, target, after)),
      step: (id, step) => send(id, stepPinned(pinnedOrder(threads.values()), id, step)),
    };
  }, [client, showArchived, threads]);
  // A row moved by the keyboard keeps the focus (moving its node may drop it), until focus goes elsewhere.
  useLayoutEffect(() => {
    const id = refocus.current;
    if (id === null) return;
    const link = document.querySelector<HTMLElement>(`.sidebar .tree-row[data-thread-id="${CSS.escape(id)}"] .tree-link`);
    if (link === null || document.activeElement === link) return;
    if (document.activeElement !== null && document.activeElement !== document.body) refocus.current = null;
    else link.focus();
  }, [threads]);
  return (
    <nav className="sidebar" id="threads-drawer" aria-label="Threads">
      <div className="sidebar-head">
        <a href="/" className="brand" onClick={(e) => { e.preventDefault(); props.open(""); }}>Loom</a>
        <button className="primary" onClick={props.onNewThread} title="New thread (n)">
          New thread
        </button>
      </div>
      <input
        className="search"
        type="search"
        placeholder="Search threads  (/)"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          // Enter opens the best timeline match; Escape clears the box.
          if (e.key === "Enter" && hits[0] !== undefined) props.jump(hits[0]);
          else if (e.key === "Escape") setQuery("");
        }}
        aria-label="Search threads"
      />
      <SearchResults client={props.client} query={query} includeArchived={props.showArchived} jump={props.jump} onHits={setHits} threads={props.threads} />
      <div className="views">
        {[
          ["/schedules", "Schedules"],
          ["/providers", "Providers"],
        ].map(([href, label]) => (
          <a key={href} href={href} className={props.path === href ? "current" : ""} aria-current={props.path === href ? "page" : undefined} onClick={(e) => { e.preventDefault(); props.navigate(href!); }}>
            {label}
          </a>
        ))}
      </div>
      <div className="tabs">
        <button className={props.showArchived ? "" : "active"} onClick={() => props.setShowArchived(false)}>Active</button>
        <button className={props.showArchived ? "active" : ""} onClick={() => props.setShowArchived(true)}>Archived</button>
      </div>
      {pinError !== null ? <div className="error-text pad" role="alert">{pinError}</div> : null}
      {forest.size === 0 ? <div className="muted pad">No threads{query ? " match" : " yet"}.</div> : null}
      {windowed.shown.map(([projectId, roots]) => (
        <section key={projectId} className="project">
          <h3>{projectId}</h3>
          <ul className="tree">
            {roots.map((node) => (
              <Row key={node.row.id} node={node} depth={0} selected={props.selected} cursor={props.cursor} open={props.open} pins={pins} />
            ))}
          </ul>
        </section>
      ))}
      {windowed.hidden > 0 && !props.partial ? <MoreRoots hidden={windowed.hidden} more={more} /> : null}
      {props.partial ? <div className="muted pad small" data-testid="list-loading">Loading the rest of the list…</div> : null}
    </nav>
  );
}
