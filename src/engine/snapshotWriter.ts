import type { OrchestrationState } from "../core/state.js";
import type { EventStore } from "../store/eventStore.js";
import { setImmediate as nextTurn } from "node:timers/promises";
import { STATE_SNAPSHOT_VERSION, stateFrames } from "./stateSnapshot.js";

/** Events between two periodic snapshots unless the orchestrator is told otherwise. */
export const DEFAULT_SNAPSHOT_EVERY = 50_000;

export interface SnapshotWriterOptions {
  readonly store: EventStore;
  /** Run `read` at a point where the state holds exactly the committed log (Dispatcher.atSettledState). */
  readonly atSettledState: (read: () => void) => void;
  readonly state: Readonly<OrchestrationState>;
  /** Save once the state is this many events past the last snapshot. */
  readonly every: number;
  /** Where the last snapshot stands (the one start-up loaded, or 0). */
  readonly savedThrough: number;
}

/** Serialize frames for at most this long before letting the event loop run. */
const FRAME_BUDGET_MS = 4;

/**
 * Saves the folded state into the store every `every` events, and once more
 * on close. The state is taken synchronously at a settled point (flat arrays
 * of its maps' keys and values: stateSnapshot.ts), so the
 * bytes are the fold of exactly the log up to `state.lastSequence`; they are
 * then serialized a few frames at a time (stateSnapshot.ts), letting the
 * event loop run between them, and written one save at a time. A failed save is reported and retried at
 * the next threshold: a snapshot is only ever a shortcut, the log stays the truth.
 */
export class SnapshotWriter {
  private savedThrough: number;
  private saving: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: SnapshotWriterOptions) {
    this.savedThrough = options.savedThrough;
  }

  /** The log position of the last snapshot saved (or loaded at start-up). */
  get lastSaved(): number {
    return this.savedThrough;
  }

  /** Called after the state moved on: saves when it is `every` events past the last snapshot. */
  progressed(): void {
    if (this.closed || this.saving !== null) return;
    if (this.options.state.lastSequence - this.savedThrough < this.options.every) return;
    void this.save();
  }

  /** Save now unless the last snapshot is current; resolves when written (or failed and reported). */
  save(): Promise<void> {
    if (this.saving !== null) return this.saving.then(() => (this.closed ? undefined : this.saveIfBehind()));
    return this.saveIfBehind();
  }

  /** Write a final snapshot, then stop. */
  async close(): Promise<void> {
    await this.save();
    this.closed = true;
  }

  private saveIfBehind(): Promise<void> {
    if (this.options.state.lastSequence <= this.savedThrough) return Promise.resolve();
    const saving = new Promise<{ sequence: number; frames: Iterable<Uint8Array> }>((resolve, reject) => {
      this.options.atSettledState(() => {
        try {
          resolve({ sequence: this.options.state.lastSequence, frames: stateFrames(this.options.state) });
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    })
      .then(async ({ sequence, frames }) => {
        const body = await serializeInTurns(frames);
        await this.options.store.saveSnapshot({ version: STATE_SNAPSHOT_VERSION, sequence, body });
        this.savedThrough = Math.max(this.savedThrough, sequence);
      })
      .catch((error: unknown) => {
        console.error("loom: saving the state snapshot failed (start-up will replay more of the log)", error);
      })
      .finally(() => {
        this.saving = null;
      });
    this.saving = saving;
    return saving;
  }
}

/**
 * The frames joined, serialized FRAME_BUDGET_MS at a time with a turn of the
 * event loop between; then copied into one body the same way, so no single
 * step serializes or copies more than a budget's worth.
 */
async function serializeInTurns(frames: Iterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let length = 0;
  let since = performance.now();
  const budgetSpent = async (): Promise<void> => {
    if (performance.now() - since < FRAME_BUDGET_MS) return;
    await nextTurn();
    since = performance.now();
  };
  for (const frame of frames) {
    parts.push(frame);
    length += frame.byteLength;
    await budgetSpent();
  }
  const body = Buffer.allocUnsafe(length);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.byteLength;
    await budgetSpent();
  }
  return body;
}
