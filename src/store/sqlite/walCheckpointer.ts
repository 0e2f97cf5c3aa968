import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";

/**
 * WAL checkpoints off the server's event loop. With WAL + `synchronous =
 * NORMAL` a commit only appends to the WAL; the checkpoint, which copies the
 * WAL into the database file and syncs it, is where the disk is paid for.
 * Left to SQLite (`wal_autocheckpoint`), it runs inside whichever commit
 * crosses the threshold, on the thread that commits: about 100 ms of a
 * stalled event loop every ~40 MB of WAL (docs/benchmarks.md). Here a worker
 * thread with its own connection to the file runs `wal_checkpoint(PASSIVE)`,
 * which never blocks the committing connection, every `everyCommits`
 * commits; the main connection's autocheckpoint is off while the worker runs.
 *
 * The worker starts with the first checkpoint it is asked for, so a store
 * that never writes much never starts one; the connection's autocheckpoint
 * is off from then on. Should the worker fail to start or die, it comes
 * back and nothing else changes.
 */

/** The main connection's automatic checkpoint, in WAL pages, whenever no worker checkpoints. */
export const AUTOCHECKPOINT_PAGES = 10_000;

/** Commits between two background checkpoints by default (a commit writes a handful of WAL pages). */
export const DEFAULT_CHECKPOINT_EVERY_COMMITS = 1_000;

/** What one background checkpoint did: `pragma wal_checkpoint`'s answer. */
export interface CheckpointResult {
  /** WAL frames at the time. */
  readonly walFrames: number;
  /** Frames copied into the database file so far (all of them when the checkpoint completed). */
  readonly checkpointedFrames: number;
  readonly ms: number;
}

// CommonJS, run with `eval`: the worker needs no file of its own next to the compiled store.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 5000");
db.pragma("wal_autocheckpoint = 0");
parentPort.on("message", (message) => {
  if (message === "close") {
    db.close();
    parentPort.close();
    return;
  }
  const started = performance.now();
  const [row] = db.pragma("wal_checkpoint(PASSIVE)");
  parentPort.postMessage({ walFrames: row.log, checkpointedFrames: row.checkpointed, ms: performance.now() - started });
});
parentPort.postMessage("ready");
`;

export class WalCheckpointer {
  private worker: Worker | null = null;
  private ready = false;
  private running = false;
  private wanted = false;
  private commits = 0;
  private failed = false;
  private closed = false;
  private readonly listeners: ((result: CheckpointResult) => void)[] = [];

  constructor(
    private readonly db: Database,
    private readonly filePath: string,
    private readonly everyCommits: number,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Whether a worker checkpoints the file now (the main connection's autocheckpoint is off). */
  get active(): boolean {
    return this.ready && !this.closed;
  }

  /** Called after each commit that wrote; every `everyCommits` of them asks for a checkpoint. */
  noteCommit(): void {
    if (this.closed || this.failed) return;
    this.commits += 1;
    if (this.commits < this.everyCommits) return;
    this.commits = 0;
    this.request();
  }

  /**
   * Called after a large write outside the commit path (a snapshot chunk):
   * starts the worker if it is not running yet and asks for a checkpoint,
   * so SQLite's own, in a write on this thread, never comes due.
   */
  noteLargeWrite(): void {
    if (this.closed || this.failed) return;
    this.commits = 0;
    this.request();
  }

  /** Resolves with the next checkpoint the worker completes. */
  nextCheckpoint(): Promise<CheckpointResult> {
    return new Promise((resolve) => this.listeners.push(resolve));
  }

  /** Stop the worker; its connection closes (the last one on the file runs SQLite's closing checkpoint there). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    // Unref'd while it runs; its exit is awaited now, so it must keep the process up until then.
    worker.ref();
    worker.postMessage("close");
    await exited;
  }

  private request(): void {
    if (this.worker === null) {
      this.start();
      this.wanted = true;
      return;
    }
    if (!this.ready || this.running) {
      this.wanted = true;
      return;
    }
    this.running = true;
    this.worker.postMessage("checkpoint");
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: createRequire(import.meta.url).resolve("better-sqlite3"), file: this.filePath } });
    } catch (error) {
      this.fail(error);
      return;
    }
    worker.unref();
    this.worker = worker;
    // Off from now: a checkpoint SQLite ran in a commit while the worker starts would be the stall this avoids.
    this.db.pragma("wal_autocheckpoint = 0");
    worker.on("message", (message: "ready" | CheckpointResult) => {
      if (message === "ready") {
        if (this.closed) return;
        this.ready = true;
      } else {
        this.running = false;
        for (const listener of this.listeners.splice(0)) listener(message);
      }
      if (this.wanted && !this.closed) {
        this.wanted = false;
        this.request();
      }
    });
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", () => {
      if (!this.closed) this.fail(new Error("the checkpoint worker exited"));
    });
  }

  private fail(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.ready = false;
    this.worker = null;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    this.log(`loom: background WAL checkpoints stopped; SQLite checkpoints on commit again: ${error instanceof Error ? error.message : String(error)}`);
  }
}
