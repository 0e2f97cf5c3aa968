import { useEffect, useMemo, useState } from "react";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import type { TreeWaterfall, WaterfallRequest, WaterfallRun, WaterfallThread, WaterfallWait } from "../../src/contracts/wire/treeViews.js";
import { callApi, errorText } from "./api.js";
import { BADGE_LABEL, badgeOfRunStatus } from "./status.js";
import { statusWords } from "./statusWords.js";
import { shortDuration, useTicking } from "./treeTime.js";

/**
 * A tree's waterfall (`/t/<rootThreadId>/waterfall`, from
 * `GET /api/ui/trees/:rootThreadId/waterfall`): every thread of the tree as a
 * row, indented by depth, each of its runs a bar over the tree's time span
 * colored by status (running ones reach to now and grow), the recorded waits
 * hatched over them and approvals and questions marked from ask to answer.
 * Hovering or focusing a bar says its run's status, start, duration and end
 * reason; a row opens its thread. Re-read whenever a thread of the tree
 * changes in the shell (a run starting or ending, a wait, a request).
 */

/** The shell rows under `rootThreadId` (by parent links), as one string: a change re-reads the waterfall. */
function treeVersion(threads: ReadonlyMap<string, ThreadShell>, rootThreadId: string): string {
  const parts: string[] = [];
  for (const row of threads.values()) {
    let top: ThreadShell | undefined = row;
    for (let hops = 0; top !== undefined && top.parentThreadId !== null && hops < 50; hops += 1) top = threads.get(top.parentThreadId);
    if (top?.id === rootThreadId) parts.push(`${row.id}:${row.runStatus ?? "-"}:${row.inWait ? "w" : ""}`);
  }
  return parts.sort().join(",");
}

const time = (iso: string) => new Date(iso).toLocaleTimeString();

function runText(thread: WaterfallThread, run: WaterfallRun, now: number): string {
  const start = run.startedAt ?? run.createdAt;
  const end = run.endedAt === null ? now : Date.parse(run.endedAt);
  const status = BADGE_LABEL[badgeOfRunStatus(run.status)];
  const parts = [`${thread.title || thread.threadId} · run ${run.ordinal}`, status, run.startedAt === null ? `queued ${time(run.createdAt)}` : `started ${time(start)}`, `${shortDuration(end - Date.parse(start))}${run.endedAt === null ? " so far" : ""}`];
  if (run.endedAt !== null) parts.push(`ended ${time(run.endedAt)}${run.endReason === null ? "" : `: ${run.endReason.replaceAll("_", " ")}`}`);
  if (run.failure !== null) parts.push(run.failure);
  if (run.waits.length > 0) parts.push(`${run.waits.length} wait${run.waits.length === 1 ? "" : "s"}`);
  const asks = run.requests.filter((r) => r.category !== "request");
  if (asks.length > 0) parts.push(asks.map((r) => r.category).join(", "));
  return parts.join(" · ");
}

function waitText(wait: WaterfallWait, now: number): string {
  const end = wait.endedAt === null ? now : Date.parse(wait.endedAt);
  return `waited in ${wait.label ?? "a wait"} from ${time(wait.startedAt)} for ${shortDuration(end - Date.parse(wait.startedAt))}${wait.endedAt === null ? ", still waiting" : ""}`;
}

function requestText(request: WaterfallRequest, now: number): string {
  const end = request.resolvedAt === null ? now : Date.parse(request.resolvedAt);
  const held = shortDuration(end - Date.parse(request.createdAt));
  const what = request.category === "request" ? request.kind.replaceAll("_", " ") : request.category;
  return request.resolvedAt === null ? `${what} asked ${time(request.createdAt)}, waiting for you (${held})` : `${what} asked ${time(request.createdAt)}, ${statusWords(request.outcome)} after ${held}`;
}

export function TreeWaterfallView(props: { readonly rootThreadId: string; readonly threads: ReadonlyMap<string, ThreadShell>; readonly open: (threadId: string) => void }) {
  const { rootThreadId, threads } = props;
  const version = useMemo(() => treeVersion(threads, rootThreadId), [threads, rootThreadId]);
  const [read, setRead] = useState<{ waterfall: TreeWaterfall; at: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [detail, setDetail] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    callApi<TreeWaterfall>("GET", `/api/ui/trees/${encodeURIComponent(rootThreadId)}/waterfall`).then(
      (waterfall) => {
        if (!live) return;
        setRead({ waterfall, at: Date.now() });
        setError(null);
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [rootThreadId, version]);
  const waterfall = read?.waterfall ?? null;
  const going = waterfall !== null && waterfall.startedAt !== null && waterfall.endedAt === null;
  const clock = useTicking(going, 500);
  if (error !== null) return <div className="pad error-text" role="alert">Waterfall: {error}</div>;
  if (waterfall === null) return <div className="pad muted">Loading the waterfall…</div>;
  // Times on the server's clock: `now` at the read, advanced by ours since.
  const now = Date.parse(waterfall.now) + (clock - read!.at);
  const start = waterfall.startedAt === null ? now : Date.parse(waterfall.startedAt);
  const end = Math.max(waterfall.endedAt === null ? now : Date.parse(waterfall.endedAt), start + 1);
  const pct = (t: number) => `${(((Math.min(Math.max(t, start), end) - start) / (end - start)) * 100).toFixed(3)}%`;
  const width = (from: number, to: number) => `${(((Math.min(to, end) - Math.max(from, start)) / (end - start)) * 100).toFixed(3)}%`;
  const runCount = waterfall.threads.reduce((n, thread) => n + thread.runs.length, 0);
  return (
    <div className="waterfall-view">
      <header className="thread-head">
        <nav className="breadcrumb" aria-label="Lineage">
          <a href={`/t/${encodeURIComponent(rootThreadId)}`} onClick={(e) => { e.preventDefault(); props.open(rootThreadId); }}>
            ← {waterfall.title || rootThreadId}
          </a>
        </nav>
        <h2>Waterfall</h2>
        <div className="thread-meta muted small">
          <span>
            {waterfall.threads.length} thread{waterfall.threads.length === 1 ? "" : "s"}, {runCount} run{runCount === 1 ? "" : "s"}
            {waterfall.startedAt === null ? ", nothing ran yet" : `, ${shortDuration(end - start)}${going ? " so far" : ""}`}
          </span>
          <span className="wf-legend" aria-label="Legend">
            <span><i className="wf-swatch wf-running" /> running</span>
            <span><i className="wf-swatch wf-waiting-approval" /> waiting on you</span>
            <span><i className="wf-swatch wf-done" /> done</span>
            <span><i className="wf-swatch wf-failed" /> failed</span>
            <span><i className="wf-swatch wf-wait-swatch" /> waiting on threads</span>
            <span><i className="wf-swatch wf-mark-approval" /> approval</span>
            <span><i className="wf-swatch wf-mark-question" /> question</span>
          </span>
        </div>
      </header>
      <div className="waterfall" aria-label="Waterfall of the tree's runs">
        <div className="wf-row wf-axis" aria-hidden="true">
          <span className="wf-label" />
          <span className="wf-track">
            {[0, 0.25, 0.5, 0.75, 1].map((at) => (
              <span key={at} className="wf-tick" style={{ left: `${at * 100}%` }}>{shortDuration((end - start) * at)}</span>
            ))}
          </span>
        </div>
        {waterfall.threads.map((thread) => (
          <div
            key={thread.threadId}
            className="wf-row"
            data-thread-id={thread.threadId}
            data-depth={thread.depth}
            onClick={() => props.open(thread.threadId)}
          >
            <a
              className="wf-label"
              href={`/t/${encodeURIComponent(thread.threadId)}`}
              style={{ paddingLeft: `${4 + thread.depth * 12}px` }}
              title={thread.title || thread.threadId}
              onClick={(e) => e.preventDefault()}
            >
              {thread.title || "(untitled)"}
            </a>
            <span className="wf-track">
              {thread.runs.map((run) => {
                const from = Date.parse(run.startedAt ?? run.createdAt);
                const to = run.endedAt === null ? now : Date.parse(run.endedAt);
                const text = runText(thread, run, now);
                return (
                  <button
                    key={run.runId}
                    type="button"
                    className={`wf-bar wf-${badgeOfRunStatus(run.status)}${run.startedAt === null ? " wf-unstarted" : ""}`}
                    style={{ left: pct(from), width: width(from, to) }}
                    data-run-id={run.runId}
                    data-status={run.status}
                    aria-label={text}
                    title={text}
                    onMouseEnter={() => setDetail(text)}
                    onFocus={() => setDetail(text)}
                  />
                );
              })}
              {thread.runs.flatMap((run) =>
                run.waits.map((wait) => {
                  const from = Date.parse(wait.startedAt);
                  const to = wait.endedAt === null ? now : Date.parse(wait.endedAt);
                  const text = waitText(wait, now);
                  return <span key={wait.nodeId} className="wf-wait" style={{ left: pct(from), width: width(from, to) }} data-run-id={run.runId} title={text} aria-label={text} role="img" onMouseEnter={() => setDetail(text)} />;
                }),
              )}
              {thread.runs.flatMap((run) =>
                run.requests.map((request) => {
                  const from = Date.parse(request.createdAt);
                  const to = request.resolvedAt === null ? now : Date.parse(request.resolvedAt);
                  const text = requestText(request, now);
                  return (
                    <span key={request.requestId} className={`wf-ask wf-ask-${request.category}${request.resolvedAt === null ? " pending" : ""}`} style={{ left: pct(from), width: width(from, to) }} data-category={request.category} data-run-id={run.runId}>
                      <button type="button" className={`wf-mark wf-mark-${request.category}`} aria-label={text} title={text} onMouseEnter={() => setDetail(text)} onFocus={() => setDetail(text)} />
                    </span>
                  );
                }),
              )}
            </span>
          </div>
        ))}
      </div>
      <div className="wf-detail muted small" role="status" aria-live="polite">
        {detail ?? "Hover or focus a bar for its run; click a row to open its thread."}
      </div>
    </div>
  );
}
