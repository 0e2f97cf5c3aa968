import { createHash } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
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

/** Remove a thread's home under every instance (a deleted thread's agent never resumes). */
export async function forgetAgentHomes(agentsDir: string, threadId: string): Promise<void> {
  const instances = await readdir(agentsDir).catch(() => [] as string[]);
  await Promise.all(instances.map((instance) => rm(join(agentsDir, instance, agentHomeName(threadId)), { recursive: true, force: true })));
}
