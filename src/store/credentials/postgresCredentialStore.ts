import type { Pool } from "pg";
import type { CredentialEnd, CredentialKind, CredentialRecord, CredentialSelector, CredentialStore } from "../../contracts/credentialRecords.js";

interface Row {
  readonly token_hash: string;
  readonly credential_id: string;
  readonly kind: CredentialKind;
  readonly node_id: string;
  readonly thread_id: string | null;
  readonly provider_session_id: string | null;
  readonly scope: Record<string, unknown>;
  readonly expires_at: number | null;
  readonly last_used_at: number;
  readonly ended: CredentialEnd | null;
}

/**
 * Credential hashes in the shared PostgreSQL database (table
 * `loom_credentials`, migration 3 of the event store): every node validates
 * every token against the same rows, so an expiry or revocation on one node
 * holds on all of them with the next request. The pool is the event store's
 * (PostgresEventStore.connectionPool), whose connections resolve the tables
 * in the store's schema.
 */
export class PostgresCredentialStore implements CredentialStore {
  constructor(private readonly pool: Pool) {}

  async insert(record: CredentialRecord): Promise<void> {
    await this.pool.query({
      name: "loom_credentials_insert",
      text: `INSERT INTO loom_credentials (token_hash, credential_id, kind, node_id, thread_id, provider_session_id, scope, expires_at, last_used_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (token_hash) DO UPDATE SET node_id = EXCLUDED.node_id, ended = NULL, ended_at = NULL, last_used_at = EXCLUDED.last_used_at
             WHERE loom_credentials.kind = 'owner' AND EXCLUDED.kind = 'owner'`,
      values: [record.tokenHash, record.credentialId, record.kind, record.nodeId, record.threadId, record.providerSessionId, JSON.stringify(record.scope), record.expiresAt, record.lastUsedAt],
    });
  }

  async findByHash(tokenHash: string): Promise<CredentialRecord | null> {
    const result = await this.pool.query<Row>({ name: "loom_credentials_by_hash", text: "SELECT * FROM loom_credentials WHERE token_hash = $1", values: [tokenHash] });
    const row = result.rows[0];
    return row === undefined ? null : toRecord(row);
  }

  async findById(credentialId: string): Promise<CredentialRecord | null> {
    const result = await this.pool.query<Row>({ name: "loom_credentials_by_id", text: "SELECT * FROM loom_credentials WHERE credential_id = $1", values: [credentialId] });
    const row = result.rows[0];
    return row === undefined ? null : toRecord(row);
  }

  async touch(tokenHash: string, now: number): Promise<void> {
    await this.pool.query({
      name: "loom_credentials_touch",
      text: "UPDATE loom_credentials SET last_used_at = GREATEST(last_used_at, $1) WHERE token_hash = $2 AND ended IS NULL",
      values: [now, tokenHash],
    });
  }

  async end(selector: CredentialSelector, why: CredentialEnd, now: number): Promise<number> {
    const [where, values] = selectorSql(selector);
    const result = await this.pool.query(`UPDATE loom_credentials SET ended = $1, ended_at = $2 WHERE ended IS NULL AND ${where}`, [why, now, ...values]);
    return result.rowCount ?? 0;
  }

  async liveSessions(): Promise<readonly { nodeId: string; threadId: string; providerSessionId: string }[]> {
    const result = await this.pool.query<{ node_id: string; thread_id: string; provider_session_id: string }>(
      "SELECT node_id, thread_id, provider_session_id FROM loom_credentials WHERE ended IS NULL AND kind = 'thread' ORDER BY credential_id",
    );
    return result.rows.map((row) => ({ nodeId: row.node_id, threadId: row.thread_id, providerSessionId: row.provider_session_id }));
  }

  /** The pool belongs to the event store, which closes it. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function selectorSql(selector: CredentialSelector): [string, unknown[]] {
  if ("credentialId" in selector) return ["credential_id = $3", [selector.credentialId]];
  if ("providerSessionId" in selector) return ["provider_session_id = $3", [selector.providerSessionId]];
  if ("nodeId" in selector) return ["node_id = $3 AND kind = $4", [selector.nodeId, selector.kind]];
  return ["kind = $3", [selector.kind]];
}

function toRecord(row: Row): CredentialRecord {
  return {
    tokenHash: row.token_hash,
    credentialId: row.credential_id,
    kind: row.kind,
    nodeId: row.node_id,
    threadId: row.thread_id,
    providerSessionId: row.provider_session_id,
    scope: row.scope,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    ended: row.ended,
  };
}
