/**
 * Test-gated merges into one parent share its scratch worktree, so they take
 * turns in this process: each waits for the one before it, whatever that
 * one's outcome. Keyed by the scratch worktree's path.
 */
const tails = new Map<string, Promise<unknown>>();

export async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const mine = before.then(work, work);
  const tail = mine.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await mine;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
