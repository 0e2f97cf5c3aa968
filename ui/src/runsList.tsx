import type { Run } from "../../src/contracts/entities/runs.js";
import { Badge } from "./sidebar.js";
import { badgeOfRunStatus } from "./status.js";

/** When a run started and how long it took (or has taken so far), e.g. "14:02:10, 3 s". */
function timing(run: Run): string {
  if (run.startedAt === null) return run.held ? "held by Stop" : run.queueRank !== null ? `queued, #${run.queueRank + 1}` : "not started";
  const started = Date.parse(run.startedAt);
  const seconds = Math.max(0, Math.round(((run.endedAt === null ? Date.now() : Date.parse(run.endedAt)) - started) / 1000));
  return `${new Date(started).toLocaleTimeString()}, ${seconds} s${run.endedAt === null ? " so far" : ""}`;
}

/**
 * The thread's runs, newest first, each with its status, when it started,
 * how long it ran, why it ended and its failure: a disclosure under the
 * header's run count.
 */
export function RunsList({ runs }: { readonly runs: ReadonlyMap<string, Run> }) {
  const ordered = [...runs.values()].sort((a, b) => b.ordinal - a.ordinal);
  return (
    <details className="runs">
      <summary>
        {ordered.length} run{ordered.length === 1 ? "" : "s"}
      </summary>
      <ol className="runs-list" aria-label="Runs">
        {ordered.map((run) => (
          <li key={run.id} className="run-row" data-run-ordinal={run.ordinal}>
            <span className="run-ordinal">run {run.ordinal}</span> <Badge kind={badgeOfRunStatus(run.status)} /> <span className="muted small">{run.status.replaceAll("_", " ")} · {timing(run)}</span>
            {run.endReason !== null && run.endReason !== "completed" ? <span className="muted small"> · {run.endReason.replaceAll("_", " ")}</span> : null}
            {run.failure !== null ? <div className="error-text small">{run.failure.code}: {run.failure.message}</div> : null}
          </li>
        ))}
      </ol>
    </details>
  );
}
