import type { ClientSubscription, LoomWsClient } from "../../src/client/loomWsClient.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { callApi } from "./api.js";
import { Store } from "./store.js";

export interface ShellState {
  /** False until the first snapshot (or first page) arrives. */
  readonly loaded: boolean;
  /** True while only the first page is held: the subscription's whole list has not arrived yet. */
  readonly partial: boolean;
  readonly threads: ReadonlyMap<string, ThreadShell>;
}

/** How many rows the first page holds: about as many as the sidebar first renders (ui/src/sidebarWindow.ts). */
export const FIRST_PAGE_ROWS = 200;
/** How long the subscription waits for the first page before it is asked for anyway. */
const FIRST_PAGE_WAIT_MS = 2_000;
/** How long after the first page the subscription opens when no frame is drawn (a hidden tab). */
const HIDDEN_TAB_WAIT_MS = 100;

/**
 * The thread list's first page over HTTP (`GET
 * /api/orchestration/shell-snapshot?limit=…`, pinned first, then newest),
 * asked for as soon as the page knows it is signed in, beside the WebSocket's
 * connection: a list of thousands paints from it while the subscription's
 * whole snapshot is still on its way.
 */
export function fetchFirstPage(): Promise<readonly ThreadShell[] | null> {
  return callApi<{ threads: readonly ThreadShell[] }>("GET", `/api/orchestration/shell-snapshot?limit=${FIRST_PAGE_ROWS}`).then(
    (page) => page.threads,
    () => null,
  );
}

/**
 * The thread list, live: a snapshot, then row upserts and removals (resumed
 * by the client after a reconnect). Given a first page, it shows that page
 * until the snapshot arrives, which replaces it.
 */
export class ShellStore extends Store<ShellState> {
  private subscription: ClientSubscription | null = null;
  private streamed = false;
  private stopped = false;
  /** Row changes not applied yet (null: the row is removed), and the timer that applies them. */
  private pending = new Map<string, ThreadShell | null>();
  private flushTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly client: LoomWsClient,
    private readonly archived: boolean,
    private readonly firstPage: Promise<readonly ThreadShell[] | null> | null = null,
  ) {
    super({ loaded: false, partial: false, threads: new Map() });
  }

  start(): void {
    this.stopped = false;
    if (this.firstPage === null) {
      this.openSubscription();
      return;
    }
    // The first page paints before the whole snapshot is asked for, so the two do not compete for the
    // server and the page's main thread; a page that takes too long does not hold the subscription up.
    const page = this.firstPage;
    const cap = new Promise<null>((resolve) => setTimeout(() => resolve(null), FIRST_PAGE_WAIT_MS));
    void Promise.race([page, cap]).then((rows) => {
      if (this.stopped) return;
      if (rows !== null && !this.streamed) this.set({ loaded: true, partial: true, threads: new Map(rows.map((row) => [row.id, row])) });
      // After the next frame: the first page is on screen before the whole list's parse can hold the page up.
      // A hidden tab draws no frames, so a short timer opens it there.
      let opened = false;
      const open = () => {
        if (opened) return;
        opened = true;
        setTimeout(() => {
          if (!this.stopped && this.subscription === null) this.openSubscription();
        }, 0);
      };
      requestAnimationFrame(open);
      setTimeout(open, HIDDEN_TAB_WAIT_MS);
    });
  }

  private openSubscription(): void {
    const method = this.archived ? "orchestration.subscribeArchivedShell" : "orchestration.subscribeShell";
    this.subscription = this.client.subscribe(method, {}, {
      next: (update) => {
        switch (update.kind) {
          case "snapshot":
            this.streamed = true;
            this.dropPending();
            this.set({ loaded: true, partial: false, threads: new Map(update.snapshot.threads.map((row) => [row.id, row])) });
            return;
          case "resumed":
            return;
          case "upsert":
            this.queue(update.thread.id, update.thread);
            return;
          case "remove":
            this.queue(update.threadId, null);
            return;
        }
      },
    });
  }

  /**
   * Row changes are applied together, once the burst they came in is over: a
   * command that touches many threads (a reorder, a subtree archived) is one
   * render with one copy of the list, not one per row.
   */
  private queue(threadId: string, row: ThreadShell | null): void {
    this.pending.set(threadId, row);
    this.flushTimer ??= setTimeout(() => this.flush(), 0);
  }

  private flush(): void {
    this.flushTimer = null;
    const changes = this.pending;
    this.pending = new Map();
    if (changes.size === 0) return;
    this.update((s) => {
      const threads = new Map(s.threads);
      for (const [threadId, row] of changes) {
        if (row === null) threads.delete(threadId);
        else threads.set(threadId, row);
      }
      return { loaded: s.loaded, partial: s.partial, threads };
    });
  }

  private dropPending(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.pending = new Map();
  }

  stop(): void {
    this.stopped = true;
    this.dropPending();
    this.subscription?.close();
    this.subscription = null;
  }
}
