import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of processes outside the benchmark's own (agent CLIs, the
 * PostgreSQL server), read from Linux's /proc. Each reader answers null where
 * /proc cannot tell, and a benchmark prints "?" then.
 */

/** Clock ticks per second of /proc/<pid>/stat's times. */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

interface ProcessTimes {
  readonly ppid: number;
  /** utime + stime, seconds. */
  readonly own: number;
  /** cutime + cstime: the children it has reaped, seconds. */
  readonly reaped: number;
}

function processTimes(pid: number): ProcessTimes | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = (index: number) => Number(fields[index]);
    return { ppid: ticks(1), own: (ticks(11) + ticks(12)) / CLOCK_TICKS, reaped: (ticks(13) + ticks(14)) / CLOCK_TICKS };
  } catch {
    return null;
  }
}

function processIds(): number[] | null {
  try {
    return readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return null;
  }
}

/** The processes below `root` (children, their children, ...), with their times. */
function descendants(root: number): Map<number, ProcessTimes> | null {
  const pids = processIds();
  if (pids === null) return null;
  const all = new Map<number, ProcessTimes>();
  for (const pid of pids) {
    const times = processTimes(pid);
    if (times !== null) all.set(pid, times);
  }
  const below = new Map<number, ProcessTimes>();
  let frontier = [root];
  while (frontier.length > 0) {
    const parents = new Set(frontier);
    frontier = [];
    for (const [pid, times] of all) {
      if (parents.has(times.ppid) && !below.has(pid)) {
        below.set(pid, times);
        frontier.push(pid);
      }
    }
  }
  return below;
}

/** CPU seconds per process below a root at one moment (each its own time plus what it reaped), and what the root reaped. */
export interface TreeCpuReading {
  readonly processes: ReadonlyMap<number, number>;
  readonly rootReaped: number;
}

/** Read the CPU time so far of every process below `root` (not `root` itself). */
export function readTreeCpu(root: number = process.pid): TreeCpuReading | null {
  const below = descendants(root);
  const self = processTimes(root);
  if (below === null || self === null) return null;
  return { processes: new Map([...below].map(([pid, times]) => [pid, times.own + times.reaped])), rootReaped: self.reaped };
}

/**
 * CPU seconds between two readings: of the processes that were already
 * running at the first (`existing`) and of those started since (`started`,
 * with whatever ended and was reaped by the root). A process that started
 * and ended between them counts once its parent reaped it.
 */
export function treeCpuBetween(before: TreeCpuReading, after: TreeCpuReading): { readonly existing: number; readonly started: number } {
  let existing = 0;
  let started = after.rootReaped - before.rootReaped;
  for (const [pid, seconds] of after.processes) {
    const earlier = before.processes.get(pid);
    if (earlier === undefined) started += seconds;
    else existing += seconds - earlier;
  }
  return { existing, started };
}

/**
 * CPU seconds the PostgreSQL server listening on `port` has used so far: the
 * postmaster's own and its reaped children's time, plus its live children's
 * (backends, WAL writer, checkpointer).
 */
export function postgresCpuSeconds(port: number): number | null {
  const pids = processIds();
  if (pids === null) return null;
  const postmaster = pids.find((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return /postgres$/.test(args[0] ?? "") && args.join(" ").includes(`-p ${port}`);
    } catch {
      return false;
    }
  });
  if (postmaster === undefined) return null;
  const main = processTimes(postmaster);
  const below = descendants(postmaster);
  if (main === null || below === null) return null;
  let total = main.own + main.reaped;
  for (const times of below.values()) total += times.own;
  return total;
}
