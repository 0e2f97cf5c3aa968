import type { Pool } from "pg";
import type { OutboxRow, OutboxStatus } from "../../contracts/envelopes.js";
import type { OutboxClaim } from "../eventStore.js";

/** An outbox row as node-postgres returns it (int8 parsed to number, json parsed). */
interface OutboxRecord {
  readonly position: number;
  readonly id: string;
  readonly command_id: string;
  readonly stream_id: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly replay_safe: boolean;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly lease_owner: string | null;
  readonly lease_expires_at: number | null;
  readonly available_at: number;
  readonly last_error: string | null;
  readonly created_at: string;
}

const COLUMNS = `position, id, command_id, stream_id, kind, payload, replay_safe, status, attempts,
  lease_owner, lease_expires_at, available_at, last_error, created_at`;

/**
 * Pick claimable rows oldest first and lease them in one statement. FOR
 * UPDATE SKIP LOCKED makes concurrent claimers (other connections, other
 * processes) pass over rows another claim is leasing right now instead of
 * waiting for them or leasing them twice; a row whose lease another
 * transaction just renewed is re-checked against the WHERE clause before it
 * is locked. The `status IN` term lets the planner use the partial
 * outbox_open index. Exported for the query-plan test.
 */
export const CLAIM_SQL = `
  WITH picked AS (
    SELECT position FROM outbox
    WHERE status IN ('pending', 'leased')
      AND ((status = 'pending' AND available_at <= $1) OR (status = 'leased' AND lease_expires_at <= $1))
      AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
      AND ($6::text[] IS NULL OR NOT (stream_id = ANY($6::text[])))
    ORDER BY position
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox SET status = 'leased', lease_owner = $4, lease_expires_at = $5, attempts = outbox.attempts + 1
  FROM picked WHERE outbox.position = picked.position
  RETURNING ${COLUMNS.split(",").map((column) => `outbox.${column.trim()}`).join(", ")}`;

/** The outbox half of the PostgreSQL store; rows are inserted by the commit. */
export class PostgresOutbox {
  constructor(private readonly pool: Pool) {}

  async claim({ owner, now, leaseMs, limit, kinds, skipStreams }: OutboxClaim): Promise<OutboxRow[]> {
    if (limit <= 0 || (kinds !== undefined && kinds.length === 0)) return [];
    const result = await this.pool.query<OutboxRecord>({
      name: "loom_outbox_claim",
      text: CLAIM_SQL,
      values: [now, kinds === undefined ? null : [...kinds], Math.floor(limit), owner, now + leaseMs, skipStreams === undefined || skipStreams.length === 0 ? null : [...skipStreams]],
    });
    // RETURNING has no order of its own.
    return result.rows.sort((a, b) => a.position - b.position).map(toOutboxRow);
  }

  async complete(id: string, owner: string): Promise<boolean> {
    const result = await this.pool.query({
      name: "loom_outbox_complete",
      text: `UPDATE outbox SET status = 'done', lease_expires_at = NULL
             WHERE id = $1 AND status = 'leased' AND lease_owner = $2`,
      values: [id, owner],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async renew(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    const result = await this.pool.query({
      name: "loom_outbox_renew",
      text: "UPDATE outbox SET lease_expires_at = $1 WHERE id = $2 AND status = 'leased' AND lease_owner = $3",
      values: [now + leaseMs, id, owner],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async fail(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    const result =
      retryAt === null
        ? await this.pool.query({
            name: "loom_outbox_fail",
            text: `UPDATE outbox SET status = 'failed', last_error = $1, lease_owner = NULL, lease_expires_at = NULL
                   WHERE id = $2 AND status = 'leased' AND lease_owner = $3`,
            values: [error, id, owner],
          })
        : await this.pool.query({
            name: "loom_outbox_retry",
            text: `UPDATE outbox SET status = 'pending', available_at = $1, last_error = $2, lease_owner = NULL, lease_expires_at = NULL
                   WHERE id = $3 AND status = 'leased' AND lease_owner = $4`,
            values: [retryAt, error, id, owner],
          });
    return (result.rowCount ?? 0) > 0;
  }

  async abandon(id: string, error: string): Promise<boolean> {
    const result = await this.pool.query({
      name: "loom_outbox_abandon",
      text: `UPDATE outbox SET status = 'failed', last_error = $1, lease_owner = NULL, lease_expires_at = NULL
             WHERE id = $2 AND status IN ('pending', 'leased')`,
      values: [error, id],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async list(status: OutboxStatus): Promise<OutboxRow[]> {
    const result = await this.pool.query<OutboxRecord>({
      name: "loom_outbox_list",
      text: `SELECT ${COLUMNS} FROM outbox WHERE status = $1 ORDER BY position`,
      values: [status],
    });
    return result.rows.map(toOutboxRow);
  }
}

function toOutboxRow(record: OutboxRecord): OutboxRow {
  return {
    id: record.id,
    commandId: record.command_id,
    streamId: record.stream_id,
    kind: record.kind,
    payload: record.payload,
    replaySafe: record.replay_safe,
    status: record.status,
    attempts: record.attempts,
    leaseOwner: record.lease_owner,
    leaseExpiresAt: record.lease_expires_at,
    availableAt: record.available_at,
    lastError: record.last_error,
    createdAt: record.created_at,
  };
}
