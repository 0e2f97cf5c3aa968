import { readFileSync, readdirSync } from "node:fs";

/**
 * The environments of this machine's live processes (Linux /proc), those
 * holding `entry` exactly (`NAME=value`): how a test sees what an agent CLI
 * it did not start itself was given. Unreadable processes are skipped.
 */
export function processEnvironmentsWith(entry: string): Record<string, string>[] {
  const found: Record<string, string>[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let raw: string;
    try {
      raw = readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue;
    }
    const entries = raw.split("\0").filter((line) => line !== "");
    if (!entries.includes(entry)) continue;
    found.push(Object.fromEntries(entries.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)])));
  }
  return found;
}
