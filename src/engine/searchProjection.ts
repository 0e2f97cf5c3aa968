import type { StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import type { Subscription } from "../store/eventStore.js";
import type { SearchDocument, SearchIndex, SearchPage, SearchRequest, SearchThread } from "../store/search/searchIndex.js";
import type { Orchestrator } from "./orchestrator.js";
import { SEARCH_MAPPING_VERSION, searchDocument, searchThread } from "./searchDocuments.js";

/** Longest pause between retries of a batch the index refused (a full disk, a lost connection). */
const MAX_RETRY_MS = 30_000;

/**
 * How long committed events gather before the projection writes them, unless
 * a search waits on them (then they are written on the next turn). A timer
 * rather than the next turn of the event loop: the index write (its own
 * SQLite transaction) then runs after the I/O that is ready, such as a
 * WebSocket subscriber's frame of the same commit or the next request, and a
 * burst of commits shares one index transaction.
 */
export const SEARCH_GATHER_MS = 1;

/** A write waiting to run: `gather` while events collect, `soon` on the next turn (a search waits), `retry` after a failure. */
type PendingWrite = { readonly kind: "gather" | "soon" | "retry"; readonly cancel: () => void };

/**
 * Keeps the search index current: a projection that follows the committed
 * log (Orchestrator.follow) from the position the index stored, and writes
 * each batch of thread records and documents together with the sequence it
 * covers in one index transaction. So the index survives restarts (it picks
 * up where it stopped), and an index that is missing, of another mapping
 * version, or ahead of the log (a replaced database) is emptied and rebuilt
 * from the log. Commits never wait for it: events are only buffered in the
 * listener, and written SEARCH_GATHER_MS later, or on the next turn when a
 * search waits for them (waitFor).
 */
export class SearchProjection {
  private subscription: Subscription | null = null;
  private position = 0;
  private received = 0;
  private threads = new Map<string, SearchThread>();
  private documents = new Map<string, SearchDocument>();
  private writing: Promise<void> | null = null;
  private pending: PendingWrite | null = null;
  private retryMs = 0;
  private stopped = false;
  private caughtUp = false;
  private readonly waiters = new Set<{ readonly sequence: number; readonly resolve: (reached: boolean) => void }>();

  constructor(
    private readonly orchestrator: Orchestrator,
    private readonly index: SearchIndex,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Check the stored position, rebuild when needed, then follow the log; resolves once caught up with the log's head at start. */
  async start(): Promise<void> {
    const head = this.orchestrator.state.lastSequence;
    const stored = await this.index.checkpoint();
    let from = stored.position;
    if (stored.version !== SEARCH_MAPPING_VERSION || stored.position > head) {
      if (stored.version !== null) this.log(`loom: rebuilding the search index from the log (${stored.version !== SEARCH_MAPPING_VERSION ? "new document mapping" : "the index is ahead of the log"})`);
      await this.index.reset(SEARCH_MAPPING_VERSION);
      from = 0;
    }
    this.position = from;
    this.received = from;
    this.subscription = this.orchestrator.follow(from, (event) => this.onEvent(event));
    const replayed = await this.subscription.caughtUp;
    await this.waitFor(replayed, Number.POSITIVE_INFINITY);
    this.caughtUp = true;
  }

  /** The last log sequence the index covers. */
  get indexedThrough(): number {
    return this.position;
  }

  /** True once the index has covered the log as it was when the projection started. */
  get isCaughtUp(): boolean {
    return this.caughtUp;
  }

  /** Resolve true once the index covers `sequence`, false after `timeoutMs`. */
  waitFor(sequence: number, timeoutMs: number): Promise<boolean> {
    if (this.position >= sequence) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        sequence,
        resolve: (reached: boolean) => {
          this.waiters.delete(waiter);
          if (timer !== null) clearTimeout(timer);
          resolve(reached);
        },
      };
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => waiter.resolve(false), timeoutMs) : null;
      this.waiters.add(waiter);
      // A search waits: what has gathered is written now.
      if (this.received > this.position) this.schedule("soon");
    });
  }

  search(request: SearchRequest): Promise<SearchPage> {
    return this.index.search(request);
  }

  /** Stop following, write what is buffered, and close the index. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending?.cancel();
    this.pending = null;
    this.subscription?.close();
    await this.writing;
    if (this.received > this.position) await this.write().catch(() => undefined);
    for (const waiter of [...this.waiters]) waiter.resolve(false);
    await this.index.close();
  }

  private onEvent(stored: StoredEvent): void {
    const event = toDomainEvent(stored);
    switch (event.type) {
      case "turn-item.updated": {
        const doc = searchDocument(event.data.item);
        if (doc !== null) this.documents.set(doc.itemId, doc);
        break;
      }
      case "run.created":
      case "run.updated":
      case "run-attempt.created":
      case "run-attempt.updated":
      case "provider-thread.updated":
      case "provider-turn.updated":
      case "runtime-request.updated":
      case "message.updated":
      case "plan.updated":
      case "provider-session.attached":
      case "provider-session.updated":
      case "provider-session.detached":
      case "subagent.updated":
      case "node.updated":
      case "context-transfer.created":
      case "context-transfer.updated":
      case "client-request.recorded":
      case "context-handoff.updated":
      case "checkpoint-scope.created":
      case "checkpoint.captured":
      case "checkpoint.rollback-requested":
      case "scheduled-task.updated":
      case "scheduled-task.deleted":
      case "workflow.updated":
      case "workflow.step.updated":
      case "merge-queue.entry-updated":
      case "tool-task.updated":
      case "provider-instance.limit-window-updated":
      case "unknown":
        break;
      default: {
        // Every thread event carries the whole thread.
        const thread = searchThread(event.data.thread);
        this.threads.set(thread.threadId, thread);
        // A deleted thread's buffered items must not outlive its purge in the same batch.
        if (thread.deleted) for (const [id, doc] of this.documents) if (doc.threadId === thread.threadId) this.documents.delete(id);
      }
    }
    this.received = stored.sequence;
    this.schedule(this.waiters.size > 0 ? "soon" : "gather");
  }

  /** Plan a write; a pending one stands, except that a search waiting hurries a gathering one. */
  private schedule(kind: PendingWrite["kind"]): void {
    if (this.stopped) return;
    if (this.pending !== null) {
      if (kind !== "soon" || this.pending.kind !== "gather") return;
      this.pending.cancel();
    }
    const run = () => {
      this.pending = null;
      if (this.writing !== null) {
        this.schedule("soon");
        return;
      }
      this.writing = this.write()
        .then(
          () => {
            this.retryMs = 0;
          },
          (error: unknown) => {
            this.retryMs = Math.min(MAX_RETRY_MS, Math.max(250, this.retryMs * 2));
            this.log(`loom: writing the search index failed, retrying in ${this.retryMs} ms: ${error instanceof Error ? error.message : String(error)}`);
          },
        )
        .finally(() => {
          this.writing = null;
          if (this.received > this.position) this.schedule(this.retryMs > 0 ? "retry" : this.waiters.size > 0 ? "soon" : "gather");
        });
    };
    if (kind === "soon") {
      const immediate = setImmediate(run);
      this.pending = { kind, cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(run, kind === "retry" ? this.retryMs : SEARCH_GATHER_MS);
      timer.unref();
      this.pending = { kind, cancel: () => clearTimeout(timer) };
    }
  }

  /** Write everything buffered as one batch; on failure it stays buffered (newer versions of the same entries win). */
  private async write(): Promise<void> {
    if (this.received <= this.position) return;
    const threads = this.threads;
    const documents = this.documents;
    const through = this.received;
    this.threads = new Map();
    this.documents = new Map();
    try {
      await this.index.apply({ threads: [...threads.values()], documents: [...documents.values()] }, through);
    } catch (error) {
      this.threads = new Map([...threads, ...this.threads]);
      this.documents = new Map([...documents, ...this.documents]);
      throw error;
    }
    this.position = through;
    for (const waiter of [...this.waiters]) if (waiter.sequence <= through) waiter.resolve(true);
  }
}
