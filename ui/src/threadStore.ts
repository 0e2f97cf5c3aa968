import type { ClientSubscription, LoomWsClient } from "../../src/client/loomWsClient.js";
import { type Run, isTerminalRunStatus } from "../../src/contracts/entities/runs.js";
import type { RuntimeRequest } from "../../src/contracts/entities/runtimeRequests.js";
import type { Subagent } from "../../src/contracts/entities/subagents.js";
import type { AppThread } from "../../src/contracts/thread.js";
import type { TurnItem } from "../../src/contracts/turnItems.js";
import type { HistoryPage, ThreadStreamUpdate, WireEvent } from "../../src/contracts/wire/projections.js";
import { errorText } from "./api.js";
import { Store } from "./store.js";

/** A command's output as it streams (subscribeCommandOutput). */
export interface LiveOutput {
  readonly outputStreamId: string;
  readonly itemId: string;
  readonly runId: string;
  /** The command line, when the provider told it while the command runs. */
  readonly command: string | null;
  readonly text: string;
  readonly ended: boolean;
}

export interface ThreadState {
  readonly phase: "loading" | "ready" | "failed" | "deleted";
  readonly error: string | null;
  readonly thread: AppThread | null;
  readonly runs: ReadonlyMap<string, Run>;
  readonly subagents: ReadonlyMap<string, Subagent>;
  readonly requests: ReadonlyMap<string, RuntimeRequest>;
  /** The timeline so far, in position order. */
  readonly items: readonly TurnItem[];
  /** Cursor for older items; null when the start of the thread is loaded. */
  readonly historyCursor: string | null;
  /** Assistant text streamed ahead of its committed item, by item id. */
  readonly deltas: ReadonlyMap<string, string>;
  readonly outputs: ReadonlyMap<string, LiveOutput>;
}

const EMPTY: ThreadState = {
  phase: "loading",
  error: null,
  thread: null,
  runs: new Map(),
  subagents: new Map(),
  requests: new Map(),
  items: [],
  historyCursor: null,
  deltas: new Map(),
  outputs: new Map(),
};

/**
 * One thread, live: subscribeThread's bounded snapshot, then its events
 * applied as upserts (every event carries whole entities), assistant deltas
 * and command output streams. The client resumes it after a reconnect.
 */
export class ThreadStore extends Store<ThreadState> {
  private subscription: ClientSubscription | null = null;
  private readonly outputSubscriptions = new Map<string, ClientSubscription>();

  constructor(
    private readonly client: LoomWsClient,
    readonly threadId: string,
    private readonly turnItemLimit = 100,
  ) {
    super(EMPTY);
  }

  start(): void {
    this.subscription = this.client.subscribe(
      "orchestration.subscribeThread",
      { threadId: this.threadId, turnItemLimit: this.turnItemLimit },
      {
        next: (update) => this.apply(update),
        error: (error) => this.update((s) => ({ ...s, phase: "failed", error: errorText(error) })),
      },
      { dedupeBodies: false },
    );
  }

  stop(): void {
    this.subscription?.close();
    this.subscription = null;
    for (const sub of this.outputSubscriptions.values()) sub.close();
    this.outputSubscriptions.clear();
  }

  /** Read the page of items before the loaded ones (HTTP, with the session cookie). */
  async loadOlder(): Promise<void> {
    const cursor = this.get().historyCursor;
    if (cursor === null) return;
    const res = await fetch(`/api/orchestration/threads/${encodeURIComponent(this.threadId)}/history-page?cursor=${encodeURIComponent(cursor)}&limit=200`, {
      credentials: "same-origin",
    });
    if (!res.ok) throw new Error(`history-page: HTTP ${res.status}`);
    const page = (await res.json()) as HistoryPage;
    this.update((s) => ({ ...s, items: mergeItems(s.items, page.items), historyCursor: page.nextCursor }));
  }

  private apply(update: ThreadStreamUpdate): void {
    switch (update.kind) {
      case "snapshot": {
        const snap = update.snapshot;
        this.set({
          ...EMPTY,
          phase: "ready",
          thread: snap.thread,
          runs: byId(snap.runs),
          subagents: byId(snap.subagents),
          requests: byId(snap.requests),
          items: [...snap.items].sort((a, b) => a.position - b.position),
          historyCursor: snap.historyCursor,
          outputs: this.get().outputs,
        });
        return;
      }
      case "resumed":
        return;
      case "event":
        this.update((s) => applyEvent(s, update.event));
        return;
      case "delta":
        this.update((s) => ({ ...s, deltas: new Map(s.deltas).set(update.itemId, (s.deltas.get(update.itemId) ?? "") + update.text) }));
        return;
      case "output":
        this.followOutput(update.outputStreamId, update.itemId, update.runId, update.command);
        return;
    }
  }

  private followOutput(outputStreamId: string, itemId: string, runId: string, command: string | null): void {
    if (this.outputSubscriptions.has(outputStreamId)) return;
    this.update((s) => ({ ...s, outputs: new Map(s.outputs).set(outputStreamId, { outputStreamId, itemId, runId, command, text: "", ended: false }) }));
    const change = (f: (o: LiveOutput) => LiveOutput) =>
      this.update((s) => {
        const current = s.outputs.get(outputStreamId);
        return current === undefined ? s : { ...s, outputs: new Map(s.outputs).set(outputStreamId, f(current)) };
      });
    const sub = this.client.subscribe(
      "orchestration.subscribeCommandOutput",
      { threadId: this.threadId, outputStreamId },
      {
        next: (u) => change((o) => ({ ...o, text: u.kind === "tail" ? u.text : o.text + u.text, ended: u.kind === "tail" ? u.ended : o.ended })),
        complete: () => change((o) => ({ ...o, ended: true })),
        error: () => change((o) => ({ ...o, ended: true })),
      },
    );
    this.outputSubscriptions.set(outputStreamId, sub);
  }
}

function byId<T extends { readonly id: string }>(list: readonly T[]): Map<string, T> {
  return new Map(list.map((entry) => [entry.id, entry]));
}

function mergeItems(current: readonly TurnItem[], incoming: readonly TurnItem[]): TurnItem[] {
  const map = new Map(current.map((item) => [item.id, item]));
  for (const item of incoming) map.set(item.id, item);
  return [...map.values()].sort((a, b) => a.position - b.position);
}

/** Apply one committed event: each carries the whole entity it changed. */
function applyEvent(s: ThreadState, event: WireEvent): ThreadState {
  const data = event.data as Record<string, unknown>;
  if (event.type === "thread.deleted") return { ...s, phase: "deleted" };
  if (event.type.startsWith("thread.") && data.thread !== undefined) return { ...s, thread: data.thread as AppThread };
  switch (event.type) {
    case "run.created":
    case "run.updated": {
      const run = data.run as Run;
      return { ...s, runs: new Map(s.runs).set(run.id, run) };
    }
    case "turn-item.updated": {
      const item = data.item as TurnItem;
      const deltas = s.deltas.has(item.id) && !(item.type === "assistant_message" && item.streaming) ? withoutKey(s.deltas, item.id) : s.deltas;
      const index = s.items.findIndex((candidate) => candidate.id === item.id);
      if (index >= 0) {
        const items = [...s.items];
        items[index] = item;
        return { ...s, items, deltas };
      }
      const last = s.items.at(-1);
      return { ...s, items: last === undefined || last.position < item.position ? [...s.items, item] : mergeItems(s.items, [item]), deltas };
    }
    case "runtime-request.updated": {
      const request = data.request as RuntimeRequest;
      return { ...s, requests: new Map(s.requests).set(request.id, request) };
    }
    case "subagent.updated": {
      const subagent = data.subagent as Subagent;
      return { ...s, subagents: new Map(s.subagents).set(subagent.id, subagent) };
    }
    default:
      return s;
  }
}

function withoutKey<V>(map: ReadonlyMap<string, V>, key: string): Map<string, V> {
  const next = new Map(map);
  next.delete(key);
  return next;
}

export function activeRun(state: ThreadState): Run | null {
  // The turn in flight comes first: runs queued behind it have higher ordinals but have not started.
  let latest: Run | null = null;
  let inFlight: Run | null = null;
  for (const run of state.runs.values()) {
    if (latest === null || run.ordinal > latest.ordinal) latest = run;
    if (run.status !== "queued" && !isTerminalRunStatus(run.status) && (inFlight === null || run.ordinal > inFlight.ordinal)) inFlight = run;
  }
  return inFlight ?? latest;
}
