import { mkdir, rename, rm, symlink } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * An agent started ahead of need keeps its home (CODEX_HOME, Claude's config
 * folder) in a warm folder, because no thread is known yet. When the session
 * is handed to a thread, the folder becomes the thread's home, so the
 * thread's later sessions find the agent's conversation there and resume it
 * (docs/runs.md). The running agent still names the warm path, and it
 * records paths under it (codex keeps its conversations' file paths in its
 * state database), so that path stays behind as a link to the thread's home
 * for as long as the home lives (agentHomes.ts removes both).
 *
 * The thread's home can hold only leftovers: a thread takes a warm session
 * only for its first session on the instance, so no recorded conversation is
 * in it.
 */
export async function moveWarmHome(warmHome: string, threadHome: string): Promise<void> {
  await rm(threadHome, { recursive: true, force: true });
  await mkdir(dirname(threadHome), { recursive: true, mode: 0o700 });
  await rename(warmHome, threadHome);
  await symlink(threadHome, warmHome, "dir");
}
