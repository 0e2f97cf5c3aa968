import pg from "pg";
import type { Pool, PoolClient, PoolConfig } from "pg";
import { storeNamespace, transactionLockSql } from "../postgres/postgresLocks.js";
import { StoreError, StoreErrorCode } from "../storeErrors.js";
import {
  SNIPPET_CLOSE,
  SNIPPET_OPEN,
  type SearchChanges,
  type SearchCheckpoint,
  type SearchDocument,
  type SearchIndex,
  type SearchItemKind,
  type SearchPage,
  type SearchRequest,
  type SearchThread,
} from "./searchIndex.js";
import { type SearchTerm, termWords } from "./searchQuery.js";

/** Bumped when the tables change shape: an index of another schema is dropped and rebuilt from the log. */
const SCHEMA_VERSION = "1";
/** "LOOS": the advisory lock class of search index writers (the object id is the schema's, as for the log). */
const SEARCH_LOCK_CLASS = 0x4c4f4f53;

export interface PostgresSearchIndexOptions {
  /** The schema holding the index tables, created if missing (a lower-case identifier). Default "public". */
  readonly schema?: string;
  /** Most pooled connections. Default 4. */
  readonly poolSize?: number;
}

interface HitRow {
  item_id: string;
  thread_id: string;
  run_id: string | null;
  position: number;
  item_type: string;
  kind: string;
  created_at: string;
  title: string;
  project_id: string;
  snippet: string;
}

/**
 * The search index on PostgreSQL full-text search, for deployments whose
 * event log is in PostgreSQL. Each document's text is kept in
 * `search_items.body` with a stored generated `tsvector` (the `simple`
 * configuration: lower-cased words, no stemming, no stop words) under a GIN
 * index. A query is the AND of one `phraseto_tsquery` per term (a prefix
 * term becomes `to_tsquery` with `:*` on its last word); hits are ranked by
 * `ts_rank_cd`, newest first on ties, and snippets come from `ts_headline`.
 *
 * Several Loom nodes may project into the same tables: writes serialize on
 * a transaction-scoped advisory lock, upserts are idempotent and the stored
 * position only moves forward, so replaying a batch twice changes nothing.
 *
 * Differences from SQLite FTS5 (docs/search.md): PostgreSQL's parser keeps
 * some tokens whole (a host name `api.example.com`, a file path), so a word
 * inside one matches in SQLite but not here; accents are kept.
 */
export class PostgresSearchIndex implements SearchIndex {
  readonly backend = "postgres";
  private closing: Promise<void> | null = null;

  static async open(connection: string | PoolConfig, options: PostgresSearchIndexOptions = {}): Promise<PostgresSearchIndex> {
    const namespace = storeNamespace(options.schema);
    const config: PoolConfig = typeof connection === "string" ? { connectionString: connection } : { ...connection };
    const pool = new pg.Pool({
      ...config,
      max: options.poolSize ?? 4,
      verify: (client, done) => {
        client.query(`SET search_path TO ${namespace.schema}`).then(
          () => done(),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        );
      },
    });
    pool.on("error", () => undefined); // an idle connection that drops is replaced on the next query
    try {
      await migrate(pool, namespace.schema);
      return new PostgresSearchIndex(pool, namespace.schema, transactionLockSql({ classId: SEARCH_LOCK_CLASS, objectId: namespace.logLock.objectId }));
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  private constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly lockSql: string,
  ) {}

  async checkpoint(): Promise<SearchCheckpoint> {
    this.assertOpen();
    const rows = await this.pool.query<{ key: string; value: string }>("SELECT key, value FROM search_meta WHERE key IN ('position', 'version')");
    const value = (key: string) => rows.rows.find((row) => row.key === key)?.value ?? null;
    return { position: Number(value("position") ?? "0"), version: value("version") };
  }

  async apply(changes: SearchChanges, through: number): Promise<void> {
    this.assertOpen();
    await this.transaction(async (client) => {
      await client.query(this.lockSql);
      const threads = lastOf(changes.threads, (thread) => thread.threadId);
      if (threads.length > 0) await upsertThreads(client, threads);
      const deleted = threads.filter((thread) => thread.deleted).map((thread) => thread.threadId);
      if (deleted.length > 0) await client.query("DELETE FROM search_items WHERE thread_id = ANY($1::text[])", [deleted]);
      const documents = lastOf(changes.documents, (doc) => doc.itemId);
      if (documents.length > 0) await upsertDocuments(client, documents);
      await client.query(
        `INSERT INTO search_meta (key, value) VALUES ('position', $1)
         ON CONFLICT (key) DO UPDATE SET value = GREATEST(search_meta.value::bigint, excluded.value::bigint)::text`,
        [String(through)],
      );
    });
  }

  async reset(version: string): Promise<void> {
    this.assertOpen();
    await this.transaction(async (client) => {
      await client.query(this.lockSql);
      await client.query("TRUNCATE search_items, search_threads");
      await client.query("DELETE FROM search_meta WHERE key IN ('position', 'version')");
      await client.query("INSERT INTO search_meta (key, value) VALUES ('position', '0'), ('version', $1)", [version]);
    });
  }

  async search(request: SearchRequest): Promise<SearchPage> {
    this.assertOpen();
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const query = request.terms.map((term) => tsquery(term, param)).join(" && ");
    const where = ["i.document @@ q.query", "NOT t.deleted"];
    if (request.projectId !== null) where.push(`t.project_id = ${param(request.projectId)}`);
    if (request.threadId !== null) where.push(`i.thread_id = ${param(request.threadId)}`);
    if (request.kinds !== null) where.push(`i.kind = ANY(${param(request.kinds)}::text[])`);
    if (!request.includeArchived) where.push("NOT t.archived");
    if (!request.includeSubagents) where.push("t.relation <> 'subagent'");
    const limit = param(request.limit + 1);
    const offset = param(request.offset);
    const sql = `
      WITH q AS (SELECT (${query}) AS query),
      top AS (
        SELECT i.item_id, i.thread_id, i.run_id, i.position, i.item_type, i.kind, i.created_at, i.body, i.seq, t.title, t.project_id,
               ts_rank_cd(i.document, q.query) AS rank
        FROM search_items i JOIN search_threads t ON t.thread_id = i.thread_id, q
        WHERE ${where.join(" AND ")}
        ORDER BY rank DESC, i.seq DESC
        LIMIT ${limit} OFFSET ${offset}
      )
      SELECT top.item_id, top.thread_id, top.run_id, top.position, top.item_type, top.kind, top.created_at, top.title, top.project_id,
             ts_headline('simple', top.body, q.query, 'StartSel=${SNIPPET_OPEN}, StopSel=${SNIPPET_CLOSE}, MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=" … "') AS snippet
      FROM top, q
      ORDER BY top.rank DESC, top.seq DESC`;
    const result = await this.pool.query<HitRow>(sql, params);
    const hits = result.rows.slice(0, request.limit).map((row) => ({
      itemId: row.item_id,
      threadId: row.thread_id,
      runId: row.run_id,
      position: row.position,
      itemType: row.item_type,
      kind: row.kind as SearchItemKind,
      createdAt: row.created_at,
      threadTitle: row.title,
      projectId: row.project_id,
      snippet: row.snippet,
    }));
    return { hits, hasMore: result.rows.length > request.limit };
  }

  close(): Promise<void> {
    this.closing ??= this.pool.end();
    return this.closing;
  }

  private async transaction(work: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await work(client);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private assertOpen(): void {
    if (this.closing !== null) throw new StoreError(StoreErrorCode.closed, `the PostgreSQL search index (schema ${this.schema}) is closed`);
  }
}

/** A term as a tsquery expression; its text only ever travels as a parameter. */
function tsquery(term: SearchTerm, param: (value: unknown) => string): string {
  if (!term.prefix) return `phraseto_tsquery('simple', ${param(term.text)})`;
  const words = termWords(term);
  const text = words.map((word, index) => `'${word}'${index === words.length - 1 ? ":*" : ""}`).join(" <-> ");
  return `to_tsquery('simple', ${param(text)})`;
}

/** The last entry per key, in first-seen order: one statement may not touch a row twice. */
function lastOf<T>(entries: readonly T[], key: (entry: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const entry of entries) byKey.set(key(entry), entry);
  return [...byKey.values()];
}

async function upsertThreads(client: PoolClient, threads: readonly SearchThread[]): Promise<void> {
  await client.query(
    `INSERT INTO search_threads (thread_id, project_id, title, relation, archived, deleted)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::boolean[])
     ON CONFLICT (thread_id) DO UPDATE SET project_id = excluded.project_id, title = excluded.title, relation = excluded.relation,
       archived = excluded.archived, deleted = excluded.deleted`,
    [
      threads.map((t) => t.threadId),
      threads.map((t) => t.projectId),
      threads.map((t) => t.title),
      threads.map((t) => t.relation),
      threads.map((t) => t.archived),
      threads.map((t) => t.deleted),
    ],
  );
}

/** Documents of a deleted thread are skipped: its content left the index with it. */
async function upsertDocuments(client: PoolClient, documents: readonly SearchDocument[]): Promise<void> {
  await client.query(
    `INSERT INTO search_items (item_id, thread_id, run_id, position, item_type, kind, created_at, body)
     SELECT d.* FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])
       AS d(item_id, thread_id, run_id, position, item_type, kind, created_at, body)
     WHERE NOT EXISTS (SELECT 1 FROM search_threads t WHERE t.thread_id = d.thread_id AND t.deleted)
     ON CONFLICT (item_id) DO UPDATE SET thread_id = excluded.thread_id, run_id = excluded.run_id, position = excluded.position,
       item_type = excluded.item_type, kind = excluded.kind, created_at = excluded.created_at, body = excluded.body`,
    [
      documents.map((d) => d.itemId),
      documents.map((d) => d.threadId),
      documents.map((d) => d.runId),
      documents.map((d) => d.position),
      documents.map((d) => d.itemType),
      documents.map((d) => d.kind),
      documents.map((d) => d.createdAt),
      documents.map((d) => d.text),
    ],
  );
}

async function migrate(pool: Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`SET LOCAL search_path TO ${schema}`);
    await client.query(transactionLockSql({ classId: SEARCH_LOCK_CLASS, objectId: storeNamespace(schema).logLock.objectId }));
    await client.query("CREATE TABLE IF NOT EXISTS search_meta (key text PRIMARY KEY, value text NOT NULL)");
    const current = await client.query<{ value: string }>("SELECT value FROM search_meta WHERE key = 'schema'");
    if (current.rows[0]?.value !== SCHEMA_VERSION) {
      await client.query("DROP TABLE IF EXISTS search_items, search_threads");
      await client.query("DELETE FROM search_meta");
      await client.query(`
        CREATE TABLE search_threads (
          thread_id text PRIMARY KEY,
          project_id text NOT NULL,
          title text NOT NULL,
          relation text NOT NULL,
          archived boolean NOT NULL,
          deleted boolean NOT NULL
        )`);
      await client.query(`
        CREATE TABLE search_items (
          item_id text PRIMARY KEY,
          seq bigserial NOT NULL,
          thread_id text NOT NULL,
          run_id text,
          position integer NOT NULL,
          item_type text NOT NULL,
          kind text NOT NULL,
          created_at text NOT NULL,
          body text NOT NULL,
          document tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
        )`);
      await client.query("CREATE INDEX search_items_document ON search_items USING gin (document)");
      await client.query("CREATE INDEX search_items_thread ON search_items (thread_id)");
      await client.query("INSERT INTO search_meta (key, value) VALUES ('schema', $1)", [SCHEMA_VERSION]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
