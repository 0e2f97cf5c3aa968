import type { Database, Statement } from "better-sqlite3";
import type { OutboxRow, OutboxStatus } from "../../contracts/envelopes.js";
import type { OutboxClaim } from "../eventStore.js";

/** An outbox row as SQLite returns it. */
interface OutboxRecord {
  readonly position: number;
  readonly id: string;
  readonly command_id: string;
  readonly stream_id: string;
  readonly kind: string;
  readonly payload: string;
  readonly replay_safe: number;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly lease_owner: string | null;
  readonly lease_expires_at: number | null;
  readonly available_at: number;
  readonly last_error: string | null;
  readonly created_at: string;
}

const COLUMNS = `rowid AS position, id, command_id, stream_id, kind, payload, replay_safe, status, attempts,
  lease_owner, lease_expires_at, available_at, last_error, created_at`;

/**
 * Claimable rows, oldest first. Both branches of the OR are served by the
 * (status, available_at) index, so done and failed rows, the bulk of the
 * table over time, are never scanned. Exported for the query-plan test.
 */
export const SELECT_CLAIMABLE_SQL = `
  SELECT ${COLUMNS} FROM outbox
  WHERE ((status = 'pending' AND available_at <= @now) OR (status = 'leased' AND lease_expires_at <= @now))
    AND (@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))
    AND (@skip IS NULL OR stream_id NOT IN (SELECT value FROM json_each(@skip)))
  ORDER BY rowid
  LIMIT @limit`;

/**
 * The outbox half of the SQLite store: leasing, completion and failure.
 * Rows are inserted by SqliteEventStore.commit in the command's transaction;
 * this class owns everything that happens to them afterwards. Statements are
 * prepared once, against the store's single connection.
 */
export class SqliteOutbox {
  private readonly selectClaimable: Statement<[{ now: number; kinds: string | null; skip: string | null; limit: number }], OutboxRecord>;
  private readonly lease: Statement<[string, number, number]>;
  private readonly markDone: Statement<[string, string]>;
  private readonly extendLease: Statement<[number, string, string]>;
  private readonly markRetry: Statement<[number, string, string, string]>;
  private readonly markFailed: Statement<[string, string, string]>;
  private readonly markAbandoned: Statement<[string, string]>;
  private readonly selectByStatus: Statement<[string], OutboxRecord>;
  private readonly claimBatch: (claim: OutboxClaim) => OutboxRow[];

  constructor(db: Database) {
    this.selectClaimable = db.prepare(SELECT_CLAIMABLE_SQL);
    this.lease = db.prepare(`
      UPDATE outbox SET status = 'leased', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1
      WHERE rowid = ?`);
    this.markDone = db.prepare(`
      UPDATE outbox SET status = 'done', lease_expires_at = NULL
      WHERE id = ? AND status = 'leased' AND lease_owner = ?`);
    this.extendLease = db.prepare(`
      UPDATE outbox SET lease_expires_at = ?
      WHERE id = ? AND status = 'leased' AND lease_owner = ?`);
    this.markRetry = db.prepare(`
      UPDATE outbox SET status = 'pending', available_at = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ? AND status = 'leased' AND lease_owner = ?`);
    this.markFailed = db.prepare(`
      UPDATE outbox SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ? AND status = 'leased' AND lease_owner = ?`);
    this.markAbandoned = db.prepare(`
      UPDATE outbox SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL
      WHERE id = ? AND status IN ('pending', 'leased')`);
    this.selectByStatus = db.prepare(`SELECT ${COLUMNS} FROM outbox WHERE status = ? ORDER BY rowid`);

    // Select and lease under one write lock, so two claimers never lease the same row.
    const claimInTransaction = db.transaction(({ owner, now, leaseMs, limit, kinds, skipStreams }: OutboxClaim): OutboxRow[] => {
      const candidates = this.selectClaimable.all({
        now,
        kinds: kinds === undefined ? null : JSON.stringify(kinds),
        skip: skipStreams === undefined || skipStreams.length === 0 ? null : JSON.stringify(skipStreams),
        limit,
      });
      const leaseExpiresAt = now + leaseMs;
      return candidates.map((record) => {
        this.lease.run(owner, leaseExpiresAt, record.position);
        return toOutboxRow({
          ...record,
          status: "leased",
          lease_owner: owner,
          lease_expires_at: leaseExpiresAt,
          attempts: record.attempts + 1,
        });
      });
    });
    this.claimBatch = (claim) => claimInTransaction.immediate(claim);
  }

  claim(claim: OutboxClaim): OutboxRow[] {
    if (claim.limit <= 0 || (claim.kinds !== undefined && claim.kinds.length === 0)) return [];
    return this.claimBatch(claim);
  }

  complete(id: string, owner: string): boolean {
    return this.markDone.run(id, owner).changes > 0;
  }

  renew(id: string, owner: string, now: number, leaseMs: number): boolean {
    return this.extendLease.run(now + leaseMs, id, owner).changes > 0;
  }

  fail(id: string, owner: string, error: string, retryAt: number | null): boolean {
    const info =
      retryAt === null ? this.markFailed.run(error, id, owner) : this.markRetry.run(retryAt, error, id, owner);
    return info.changes > 0;
  }

  abandon(id: string, error: string): boolean {
    return this.markAbandoned.run(error, id).changes > 0;
  }

  list(status: OutboxStatus): OutboxRow[] {
    return this.selectByStatus.all(status).map(toOutboxRow);
  }
}

function toOutboxRow(record: OutboxRecord): OutboxRow {
  return {
    id: record.id,
    commandId: record.command_id,
    streamId: record.stream_id,
    kind: record.kind,
    payload: JSON.parse(record.payload) as unknown,
    replaySafe: record.replay_safe === 1,
    status: record.status,
    attempts: record.attempts,
    leaseOwner: record.lease_owner,
    leaseExpiresAt: record.lease_expires_at,
    availableAt: record.available_at,
    lastError: record.last_error,
    createdAt: record.created_at,
  };
}
