import { useEffect, useState } from "react";

/**
 * Time and amounts for the tree views (ui/src/treeRollup.tsx,
 * ui/src/treeWaterfall.tsx): a clock that ticks while work goes on, and
 * short words for durations and counts that fit a 390 px sidebar.
 */

/** Date.now(), re-read every `everyMs` while `ticking`. */
export function useTicking(ticking: boolean, everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [ticking, everyMs]);
  return now;
}

/** "0.4s", "12s", "4m 12s", "2h 5m". */
export function shortDuration(ms: number): string {
  const value = Math.max(0, ms);
  if (value < 10_000) return `${(value / 1000).toFixed(1)}s`;
  const seconds = Math.round(value / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** "940", "1.2k", "35k", "1.4M". */
export function shortCount(n: number): string {
  if (n < 1_000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1_000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1_000_000) return `${Math.round(n / 1_000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** "$0.04", "$12.50"; a tiny spend keeps its first significant digits. */
export function shortUsd(n: number): string {
  return n > 0 && n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`;
}
