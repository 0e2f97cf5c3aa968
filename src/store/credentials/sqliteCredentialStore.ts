import BetterSqlite3 from "better-sqlite3";
import type { Database, Statement } from "better-sqlite3";
import type { CredentialEnd, CredentialKind, CredentialRecord, CredentialSelector, CredentialStore } from "../../contracts/credentialRecords.js";

interface Row {
  readonly token_hash: string;
  readonly credential_id: string;
  readonly kind: CredentialKind;
  readonly node_id: string;
  readonly thread_id: string | null;
  readonly provider_session_id: string | null;
  readonly scope: string;
  readonly expires_at: number | null;
  readonly last_used_at: number;
  readonly ended: CredentialEnd | null;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS credentials (
    token_hash          TEXT PRIMARY KEY,
    credential_id       TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL CHECK (kind IN ('thread', 'owner')),
    node_id             TEXT NOT NULL,
    thread_id           TEXT,
    provider_session_id TEXT,
    scope               TEXT NOT NULL,
    expires_at          INTEGER,
    last_used_at        INTEGER NOT NULL,
    ended               TEXT CHECK (ended IN ('expired', 'revoked')),
    ended_at            INTEGER
  );
  CREATE INDEX IF NOT EXISTS credentials_by_session ON credentials (provider_session_id) WHERE ended IS NULL;
`;

/**
 * Credential hashes in a SQLite file of the state directory
 * (`credentials.db`): what a single node, or several processes sharing one
 * state directory, validate bearer tokens against.
 */
export class SqliteCredentialStore implements CredentialStore {
  private readonly db: Database;
  /**
   * Statements prepared once: every MCP request looks its token up, and
   * compiling the SELECT again each time cost more than running it.
   */
  private readonly statements: ReturnType<typeof prepareStatements>;
  /** The `end` statement of each selector shape, prepared on first use. */
  private readonly endStatements = new Map<string, Statement>();

  private constructor(path: string) {
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.statements = prepareStatements(this.db);
  }

  static open(path: string): SqliteCredentialStore {
    return new SqliteCredentialStore(path);
  }

  insert(record: CredentialRecord): Promise<void> {
    this.statements.insert.run(
      record.tokenHash,
      record.credentialId,
      record.kind,
      record.nodeId,
      record.threadId,
      record.providerSessionId,
      JSON.stringify(record.scope),
      record.expiresAt,
      record.lastUsedAt,
    );
    return Promise.resolve();
  }

  findByHash(tokenHash: string): Promise<CredentialRecord | null> {
    const row = this.statements.byHash.get(tokenHash) as Row | undefined;
    return Promise.resolve(row === undefined ? null : toRecord(row));
  }

  findById(credentialId: string): Promise<CredentialRecord | null> {
    const row = this.statements.byId.get(credentialId) as Row | undefined;
    return Promise.resolve(row === undefined ? null : toRecord(row));
  }

  touch(tokenHash: string, now: number): Promise<void> {
    this.statements.touch.run(now, tokenHash);
    return Promise.resolve();
  }

  end(selector: CredentialSelector, why: CredentialEnd, now: number): Promise<number> {
    const [where, value] = selectorSql(selector);
    let statement = this.endStatements.get(where);
    if (statement === undefined) {
      statement = this.db.prepare(`UPDATE credentials SET ended = ?, ended_at = ? WHERE ended IS NULL AND ${where}`);
      this.endStatements.set(where, statement);
    }
    return Promise.resolve(statement.run(why, now, ...value).changes);
  }

  liveSessions(): Promise<readonly { nodeId: string; threadId: string; providerSessionId: string }[]> {
    const rows = this.statements.liveSessions.all() as { node_id: string; thread_id: string; provider_session_id: string }[];
    return Promise.resolve(rows.map((row) => ({ nodeId: row.node_id, threadId: row.thread_id, providerSessionId: row.provider_session_id })));
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}

function prepareStatements(db: Database) {
  return {
    insert: db.prepare(
      `INSERT INTO credentials (token_hash, credential_id, kind, node_id, thread_id, provider_session_id, scope, expires_at, last_used_at, ended)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
       ON CONFLICT (token_hash) DO UPDATE SET node_id = excluded.node_id, ended = NULL, ended_at = NULL, last_used_at = excluded.last_used_at
       WHERE credentials.kind = 'owner' AND excluded.kind = 'owner'`,
    ),
    byHash: db.prepare("SELECT * FROM credentials WHERE token_hash = ?"),
    byId: db.prepare("SELECT * FROM credentials WHERE credential_id = ?"),
    touch: db.prepare("UPDATE credentials SET last_used_at = max(last_used_at, ?) WHERE token_hash = ? AND ended IS NULL"),
    liveSessions: db.prepare("SELECT node_id, thread_id, provider_session_id FROM credentials WHERE ended IS NULL AND kind = 'thread' ORDER BY rowid"),
  };
}

function selectorSql(selector: CredentialSelector): [string, unknown[]] {
  if ("credentialId" in selector) return ["credential_id = ?", [selector.credentialId]];
  if ("providerSessionId" in selector) return ["provider_session_id = ?", [selector.providerSessionId]];
  if ("nodeId" in selector) return ["node_id = ? AND kind = ?", [selector.nodeId, selector.kind]];
  return ["kind = ?", [selector.kind]];
}

function toRecord(row: Row): CredentialRecord {
  return {
    tokenHash: row.token_hash,
    credentialId: row.credential_id,
    kind: row.kind,
    nodeId: row.node_id,
    threadId: row.thread_id,
    providerSessionId: row.provider_session_id,
    scope: JSON.parse(row.scope) as Record<string, unknown>,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    ended: row.ended,
  };
}
