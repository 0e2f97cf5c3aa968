import { useEffect, useRef, useState } from "react";
import type { BudgetKind } from "../../src/contracts/entities/budgets.js";
import type { TreeRollup, TreeStatusCounts } from "../../src/contracts/wire/treeViews.js";
import { callApi } from "./api.js";
import { shortCount, shortDuration, shortUsd, useTicking } from "./treeTime.js";

/** How each count reads, in the order shown: a table the compiler checks is total. */
const COUNT_WORDS: { readonly [K in keyof TreeStatusCounts]: (n: number) => string } = {
  waitingOnYou: (n) => (n === 1 ? "needs you" : "need you"),
  failed: () => "failed",
  running: () => "running",
  stopped: () => "stopped",
  done: () => "done",
};

/** How spend against each limit reads, compactly ("1.2k/50k tok"): total over the budget kinds. */
const SPEND_OF_KIND: { readonly [K in BudgetKind]: (spent: number, limit: number) => string } = {
  tokens: (spent, limit) => `${shortCount(spent)}/${shortCount(limit)} tok`,
  costUsd: (spent, limit) => `${shortUsd(spent)}/${shortUsd(limit)}`,
  turns: (spent, limit) => `${spent}/${limit} turns`,
  spawns: (spent, limit) => `${spent}/${limit} spawns`,
  wallClockMs: (spent, limit) => `${shortDuration(spent)}/${shortDuration(limit)}`,
};

/**
 * A root's roll-up under its sidebar row (`GET /api/ui/trees/:rootThreadId`):
 * its tree's threads by status (running, waiting on you, failed, done), the
 * time from its first run's start to its last end (ticking while work goes
 * on), and what it spent: against each limit of the root's budget, or its
 * tokens and cost without one. Read once the line is on screen (a sidebar of
 * many roots reads only those in view), then again whenever `version` changes
 * (a thread of the tree started, ended or began waiting).
 */
export function TreeRollupLine({ rootThreadId, version, depth }: { readonly rootThreadId: string; readonly version: string; readonly depth: number }) {
  const [read, setRead] = useState<{ rollup: TreeRollup; at: number } | null>(null);
  const line = useRef<HTMLDivElement>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const element = line.current;
    if (element === null || seen) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) setSeen(true);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [seen]);
  useEffect(() => {
    if (!seen) return;
    let live = true;
    // A burst of shell changes (several threads at once) costs one read.
    const timer = setTimeout(() => {
      callApi<TreeRollup>("GET", `/api/ui/trees/${encodeURIComponent(rootThreadId)}`).then(
        (rollup) => live && setRead({ rollup, at: Date.now() }),
        () => undefined,
      );
    }, 120);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [rootThreadId, version, seen]);
  const rollup = read?.rollup ?? null;
  const going = rollup !== null && rollup.startedAt !== null && rollup.endedAt === null;
  const now = useTicking(going);
  const style = { paddingLeft: `${30 + depth * 14}px` };
  if (rollup === null) return <div ref={line} className="rollup tree-rollup" style={style} aria-hidden="true" />;
  // The server's clock and ours may differ: elapsed time runs from the server's `now` at the read.
  const serverNow = Date.parse(rollup.now) + (now - read!.at);
  const elapsed = rollup.startedAt === null ? null : (rollup.endedAt === null ? serverNow : Date.parse(rollup.endedAt)) - Date.parse(rollup.startedAt);
  const counts = (Object.keys(COUNT_WORDS) as (keyof TreeStatusCounts)[]).filter((kind) => rollup.counts[kind] > 0);
  const budget = rollup.budget;
  const limited = budget === null ? [] : (Object.keys(SPEND_OF_KIND) as BudgetKind[]).filter((kind) => budget.limits[kind] !== undefined);
  const spent = rollup.spent;
  return (
    <div ref={line} className="rollup tree-rollup" style={style} aria-label="Tree roll-up" data-root={rootThreadId}>
      {rollup.threadCount > 1
        ? counts.map((kind) => (
            <span key={kind} className={`rollup-count count-${kind}`} data-kind={kind} data-count={rollup.counts[kind]}>
              {rollup.counts[kind]} {COUNT_WORDS[kind](rollup.counts[kind])}
            </span>
          ))
        : null}
      {elapsed !== null ? (
        <span className="rollup-time" title={rollup.endedAt === null ? "since the tree's first run started" : "from the tree's first run's start to its last end"}>
          {shortDuration(elapsed)}
          {rollup.endedAt === null ? " so far" : ""}
        </span>
      ) : null}
      {budget !== null ? (
        <span className={`rollup-spend${budget.reached.length > 0 || budget.exceeded !== null ? " reached" : ""}`} data-budget="true" title="Spent by the tree against the root's budget">
          {limited.map((kind) => (
            <span key={kind} className={budget.reached.includes(kind) ? "spend-kind reached" : "spend-kind"} data-kind={kind}>
              {SPEND_OF_KIND[kind](spent[kind], budget.limits[kind]!)}
            </span>
          ))}
        </span>
      ) : spent.tokens > 0 || spent.costUsd > 0 ? (
        <span className="rollup-spend" title="Spent by the tree (no budget)">
          <span className="spend-kind" data-kind="tokens">{shortCount(spent.tokens)} tok</span>
          {spent.costUsd > 0 ? <span className="spend-kind" data-kind="costUsd">{shortUsd(spent.costUsd)}</span> : null}
        </span>
      ) : null}
    </div>
  );
}
