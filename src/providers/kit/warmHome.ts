import { cp, mkdir, rename, rm, symlink } from "node:fs/promises";
import { dirname } from "node:path";

/** How often the warm path is taken back from a running agent that wrote to it again while it moved. */
const MOVE_ATTEMPTS = 5;

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
 * The agent runs while its folder moves, and it may write under the warm
 * path between the rename and the link (codex creates folders in its home
 * when it needs them), which makes that path a folder again: what it wrote
 * there joins the thread's home and the link is made again.
 *
 * The thread's home can hold only leftovers: a thread takes a warm session
 * only for its first session on the instance, so no recorded conversation is
 * in it.
 */
export async function moveWarmHome(warmHome: string, threadHome: string, moves: { readonly afterRename?: () => Promise<void> } = {}): Promise<void> {
  await rm(threadHome, { recursive: true, force: true });
  await mkdir(dirname(threadHome), { recursive: true, mode: 0o700 });
  await rename(warmHome, threadHome);
  // Tests: the agent writing under the warm path at the worst moment.
  await moves.afterRename?.();
  for (let attempt = 1; ; attempt++) {
    try {
      await symlink(threadHome, warmHome, "dir");
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= MOVE_ATTEMPTS) throw error;
    }
    // The agent wrote under the warm path again: keep what it wrote (the thread's home wins a clash) and take the path back.
    await cp(warmHome, threadHome, { recursive: true, force: false, errorOnExist: false });
    await rm(warmHome, { recursive: true, force: true });
  }
}
