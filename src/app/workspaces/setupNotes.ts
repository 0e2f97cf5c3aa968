import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A note per running setup command, and per merge check (its process group
 * and folder), so a Loom killed mid-setup or mid-check can stop the group its
 * predecessor left running: these commands run in their own process group,
 * which outlives a killed parent.
 * A group is only stopped when /proc shows its leader still working in the
 * noted folder, so a reused pid is never hit.
 */

interface SetupNote {
  readonly pid: number;
  readonly cwd: string;
}

function notePath(dir: string, runId: string): string {
  return join(dir, `${createHash("sha256").update(runId).digest("hex").slice(0, 32)}.json`);
}

/** Written whole or not at all (a temp file renamed), so a kill mid-write never leaves a torn note. */
export function noteSetup(dir: string, runId: string, note: SetupNote): void {
  mkdirSync(dir, { recursive: true });
  const path = notePath(dir, runId);
  writeFileSync(`${path}.tmp`, JSON.stringify(note));
  renameSync(`${path}.tmp`, path);
}

export function forgetSetup(dir: string, runId: string): void {
  rmSync(notePath(dir, runId), { force: true });
}

/** Stop every noted setup group still running in its folder; returns how many were stopped. Forgets every note. */
export function stopLeftoverSetups(dir: string): number {
  let stopped = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const note = JSON.parse(readFileSync(path, "utf8")) as Partial<SetupNote>;
      if (typeof note.pid === "number" && typeof note.cwd === "string" && leaderWorksIn(note.pid, note.cwd)) {
        process.kill(-note.pid, "SIGKILL");
        stopped += 1;
      }
    } catch {
      // A torn note or a group already gone: nothing to stop.
    }
    rmSync(path, { force: true });
  }
  return stopped;
}

function leaderWorksIn(pid: number, cwd: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === cwd;
  } catch {
    return false;
  }
}
