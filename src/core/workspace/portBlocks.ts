import type { OrchestrationState } from "../state.js";

/**
 * Port blocks of worktree threads. A worktree gets the lowest block index no
 * other live thread holds when its worktree is recorded; a deleted thread's
 * block is free again. The index is what the log records; the app turns it
 * into ports (workspaces.portRangeStart + index * workspaces.portBlockSize),
 * so changing the range in config moves every block without a new event.
 */
export function freePortBlock(state: OrchestrationState, threadId: string): number {
  const held = new Set<number>();
  for (const thread of state.threads.values()) {
    const block = thread.workspace?.portBlock;
    if (thread.id !== threadId && thread.deletedAt === null && block !== undefined) held.add(block);
  }
  let index = 0;
  while (held.has(index)) index += 1;
  return index;
}
