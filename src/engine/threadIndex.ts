import type { AppThread } from "../contracts/thread.js";
import type { DomainEvent } from "../contracts/events.js";

/**
 * Thread lists kept in order as events are folded, so a page of threads costs
 * about its size, not the number of threads (t3_thread_list, the shell
 * snapshot). Each list holds thread ids sorted by (createdAt, id); readers
 * walk it from the end for newest first. Inserts land at the end in the
 * common case (threads are created in time order); anything else is a binary
 * search and one splice.
 *
 * Lists: per project and across projects (`*`), `main` (not deleted, not
 * archived, not a sub-agent: the default thread list) and `all` (not
 * deleted); `unarchived` across projects (the shell's default); and the
 * pinned threads.
 */

export const ThreadListKind = {
  main: "main",
  all: "all",
} as const;
export type ThreadListKind = (typeof ThreadListKind)[keyof typeof ThreadListKind];

/** Key of the cross-project lists. */
export const ALL_PROJECTS = "*";

interface Entry {
  readonly key: string;
  readonly id: string;
}

/** Ids in ascending (createdAt, id) order. */
export class SortedThreadList {
  private readonly entries: Entry[] = [];

  get size(): number {
    return this.entries.length;
  }

  insert(key: string, id: string): void {
    const last = this.entries[this.entries.length - 1];
    if (last === undefined || last.key < key) {
      this.entries.push({ key, id });
      return;
    }
    const at = this.lowerBound(key);
    if (this.entries[at]?.key === key) return;
    this.entries.splice(at, 0, { key, id });
  }

  remove(key: string): void {
    const at = this.lowerBound(key);
    if (this.entries[at]?.key === key) this.entries.splice(at, 1);
  }

  /** Ids newest first, starting just before `beforeKey` (or at the newest). */
  *newestFirst(beforeKey: string | null = null): Generator<{ key: string; id: string }> {
    let index = beforeKey === null ? this.entries.length - 1 : this.lowerBound(beforeKey) - 1;
    for (; index >= 0; index--) yield this.entries[index]!;
  }

  /** Index of the first entry whose key is >= key. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.key < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The sort key of a thread: its creation time, then its id. */
export function threadSortKey(thread: Pick<AppThread, "createdAt" | "id">): string {
  return `${thread.createdAt}\u0000${thread.id}`;
}

interface Membership {
  readonly key: string;
  readonly projectId: string;
  readonly main: boolean;
  readonly all: boolean;
  readonly unarchived: boolean;
  readonly pinned: boolean;
}

export class ThreadIndex {
  private readonly lists = new Map<string, SortedThreadList>();
  private readonly members = new Map<string, Membership>();
  private readonly pinnedIds = new Set<string>();
  private unarchivedList = new SortedThreadList();

  /** Fold one event in: only thread events change membership. */
  apply(event: DomainEvent): void {
    if (event.type === "unknown" || !("thread" in event.data)) return;
    this.upsert(event.data.thread);
  }

  /** One list, or an empty one. */
  list(projectId: string, kind: ThreadListKind): SortedThreadList {
    return this.lists.get(listName(projectId, kind)) ?? EMPTY;
  }

  /** Every thread that is neither deleted nor archived, across projects and relations (the shell's default). */
  get unarchived(): SortedThreadList {
    return this.unarchivedList;
  }

  /** Ids of pinned threads that are not deleted (a handful; callers sort them by rank). */
  get pinned(): ReadonlySet<string> {
    return this.pinnedIds;
  }

  /** The index of these threads as folding their history would leave it (membership depends only on each thread's latest record). */
  static of(threads: Iterable<AppThread>): ThreadIndex {
    const index = new ThreadIndex();
    // In sort-key order every insert is an append, not a binary search and a splice.
    const keyed = Array.from(threads, (thread) => ({ key: threadSortKey(thread), thread }));
    keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const { thread } of keyed) index.upsert(thread);
    return index;
  }

  /** Take over another index's contents (the state was rebuilt from the log). */
  replaceWith(other: ThreadIndex): void {
    this.lists.clear();
    this.members.clear();
    this.pinnedIds.clear();
    for (const [name, list] of other.lists) this.lists.set(name, list);
    for (const [id, membership] of other.members) this.members.set(id, membership);
    for (const id of other.pinnedIds) this.pinnedIds.add(id);
    this.unarchivedList = other.unarchivedList;
  }

  private upsert(thread: AppThread): void {
    const deleted = thread.deletedAt !== null;
    const next: Membership = {
      key: threadSortKey(thread),
      projectId: thread.projectId,
      all: !deleted,
      main: !deleted && thread.archivedAt === null && !isChildThread(thread),
      unarchived: !deleted && thread.archivedAt === null,
      pinned: !deleted && thread.pinnedRank !== null,
    };
    const previous = this.members.get(thread.id);
    for (const kind of [ThreadListKind.main, ThreadListKind.all]) {
      const was = previous?.[kind] ?? false;
      if (was === next[kind] && previous?.projectId === next.projectId) continue;
      if (was) for (const scope of [previous!.projectId, ALL_PROJECTS]) this.lists.get(listName(scope, kind))?.remove(previous!.key);
      if (next[kind]) for (const scope of [next.projectId, ALL_PROJECTS]) this.ensure(listName(scope, kind)).insert(next.key, thread.id);
    }
    if ((previous?.unarchived ?? false) !== next.unarchived) {
      if (next.unarchived) this.unarchivedList.insert(next.key, thread.id);
      else this.unarchivedList.remove(previous!.key);
    }
    if (next.pinned) this.pinnedIds.add(thread.id);
    else this.pinnedIds.delete(thread.id);
    this.members.set(thread.id, next);
  }

  private ensure(name: string): SortedThreadList {
    let list = this.lists.get(name);
    if (list === undefined) {
      list = new SortedThreadList();
      this.lists.set(name, list);
    }
    return list;
  }
}

const EMPTY = new SortedThreadList();

function listName(projectId: string, kind: ThreadListKind): string {
  return `${kind}\u0000${projectId}`;
}

/** Subagents, and any thread a delegation created (its lineage names the delegating node), stay out of the main lists. */
export function isChildThread(thread: AppThread): boolean {
  return thread.lineage.relation === "subagent" || thread.lineage.parentNodeId !== null;
}
