import type { ClientSubscription, LoomWsClient } from "../../src/client/loomWsClient.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { Store } from "./store.js";

export interface ShellState {
  /** False until the first snapshot arrives. */
  readonly loaded: boolean;
  readonly threads: ReadonlyMap<string, ThreadShell>;
}

/** The thread list, live: a snapshot, then row upserts and removals (resumed by the client after a reconnect). */
export class ShellStore extends Store<ShellState> {
  private subscription: ClientSubscription | null = null;

  constructor(
    private readonly client: LoomWsClient,
    private readonly archived: boolean,
  ) {
    super({ loaded: false, threads: new Map() });
  }

  start(): void {
    const method = this.archived ? "orchestration.subscribeArchivedShell" : "orchestration.subscribeShell";
    this.subscription = this.client.subscribe(method, {}, {
      next: (update) => {
        switch (update.kind) {
          case "snapshot":
            this.set({ loaded: true, threads: new Map(update.snapshot.threads.map((row) => [row.id, row])) });
            return;
          case "resumed":
            return;
          case "upsert":
            this.update((s) => ({ loaded: s.loaded, threads: new Map(s.threads).set(update.thread.id, update.thread) }));
            return;
          case "remove":
            this.update((s) => {
              const threads = new Map(s.threads);
              threads.delete(update.threadId);
              return { loaded: s.loaded, threads };
            });
            return;
        }
      },
    });
  }

  stop(): void {
    this.subscription?.close();
    this.subscription = null;
  }
}
