import { createHash } from "node:crypto";
import { readdir, readlink, rm, unlink } from "node:fs/promises";
import { join } from "node:path";

/**
 * Agent homes: `<state-dir>/agents/<instance>/<hash of thread id>`, where an
 * agent keeps its own conversation between sessions (CODEX_HOME, Claude's
 * config dir) so a thread's next run resumes it (docs/runs.md).
 */

/** The folder name of a thread's home under each instance's folder. */
export function agentHomeName(threadId: string): string {
  return createHash("sha256").update(threadId).digest("hex").slice(0, 32);
}

/**
 * Remove a thread's home under every instance (a deleted thread's agent never
 * resumes), and the links to it: a home that began as a warm session's keeps
 * the warm path as a link (providers/kit/warmHome.ts).
 */
export async function forgetAgentHomes(agentsDir: string, threadId: string): Promise<void> {
  const instances = await readdir(agentsDir).catch(() => [] as string[]);
  await Promise.all(instances.map((instance) => forgetHome(join(agentsDir, instance), agentHomeName(threadId))));
}

async function forgetHome(instanceDir: string, name: string): Promise<void> {
  const home = join(instanceDir, name);
  const entries = await readdir(instanceDir).catch(() => [] as string[]);
  for (const entry of entries.filter((e) => e !== name)) {
    const path = join(instanceDir, entry);
    if ((await readlink(path).catch(() => null)) === home) await unlink(path).catch(() => undefined);
  }
  await rm(home, { recursive: true, force: true });
}
