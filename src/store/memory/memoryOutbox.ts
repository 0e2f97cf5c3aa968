import type { NewOutboxEffect, OutboxRow, OutboxStatus } from "../../contracts/envelopes.js";
import type { OutboxClaim } from "../eventStore.js";

type MutableOutboxRow = { -readonly [K in keyof OutboxRow]: OutboxRow[K] };

/** A row about to be inserted: everything the commit decided, payload already JSON-copied. */
export interface StagedOutboxRow {
  readonly id: string;
  readonly commandId: string;
  readonly effect: NewOutboxEffect;
  readonly payload: unknown;
}

/**
 * The memory backend's outbox table. Rows are kept in creation order; the
 * rows that can still be claimed (pending or leased) are also indexed apart so
 * a claim does not walk every finished row. Callers get copies, never the
 * stored rows.
 */
export class MemoryOutbox {
  private readonly rows = new Map<string, MutableOutboxRow>();
  /** Pending and leased rows, in creation order (a Map keeps insertion order). */
  private readonly open = new Map<string, MutableOutboxRow>();

  insert(staged: readonly StagedOutboxRow[], availableAt: number, createdAt: string): void {
    for (const { id, commandId, effect, payload } of staged) {
      const row: MutableOutboxRow = {
        id,
        commandId,
        streamId: effect.streamId,
        kind: effect.kind,
        payload,
        replaySafe: effect.replaySafe,
        status: "pending",
        attempts: 0,
        leaseOwner: null,
        leaseExpiresAt: null,
        availableAt,
        lastError: null,
        createdAt,
      };
      this.rows.set(id, row);
      this.open.set(id, row);
    }
  }

  claim({ owner, now, leaseMs, limit, kinds, skipStreams }: OutboxClaim): OutboxRow[] {
    const claimed: OutboxRow[] = [];
    if (limit <= 0) return claimed;
    const kindSet = kinds === undefined ? null : new Set(kinds);
    const skipped = new Set(skipStreams ?? []);
    for (const row of this.open.values()) {
      if (claimed.length >= limit) break;
      if (kindSet !== null && !kindSet.has(row.kind)) continue;
      if (skipped.has(row.streamId)) continue;
      const claimable =
        (row.status === "pending" && row.availableAt <= now) ||
        (row.status === "leased" && row.leaseExpiresAt !== null && row.leaseExpiresAt <= now);
      if (!claimable) continue;
      row.status = "leased";
      row.leaseOwner = owner;
      row.leaseExpiresAt = now + leaseMs;
      row.attempts += 1;
      claimed.push({ ...row });
    }
    return claimed;
  }

  complete(id: string, owner: string): boolean {
    const row = this.heldBy(id, owner);
    if (row === null) return false;
    // leaseOwner stays as the record of who finished the row; no lease is active any more.
    row.status = "done";
    row.leaseExpiresAt = null;
    this.open.delete(id);
    return true;
  }

  renew(id: string, owner: string, now: number, leaseMs: number): boolean {
    const row = this.heldBy(id, owner);
    if (row === null) return false;
    row.leaseExpiresAt = now + leaseMs;
    return true;
  }

  fail(id: string, owner: string, error: string, retryAt: number | null): boolean {
    const row = this.heldBy(id, owner);
    if (row === null) return false;
    row.lastError = error;
    row.leaseOwner = null;
    row.leaseExpiresAt = null;
    if (retryAt === null) {
      row.status = "failed";
      this.open.delete(id);
    } else {
      // Stays in `open` at its original position: retries keep creation order.
      row.status = "pending";
      row.availableAt = retryAt;
    }
    return true;
  }

  abandon(id: string, error: string): boolean {
    const row = this.rows.get(id);
    if (row === undefined || (row.status !== "pending" && row.status !== "leased")) return false;
    row.status = "failed";
    row.lastError = error;
    row.leaseOwner = null;
    row.leaseExpiresAt = null;
    this.open.delete(id);
    return true;
  }

  list(status: OutboxStatus): OutboxRow[] {
    const source = status === "pending" || status === "leased" ? this.open : this.rows;
    const result: OutboxRow[] = [];
    for (const row of source.values()) {
      if (row.status === status) result.push({ ...row });
    }
    return result;
  }

  /** The row when `owner` holds its lease (expired or not, as long as nobody re-claimed it). */
  private heldBy(id: string, owner: string): MutableOutboxRow | null {
    const row = this.rows.get(id);
    if (row === undefined || row.status !== "leased" || row.leaseOwner !== owner) return null;
    return row;
  }
}
