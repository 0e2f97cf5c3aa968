import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Database, Statement } from "better-sqlite3";
import { StoreError, StoreErrorCode, settle } from "../storeErrors.js";
import {
  SNIPPET_CLOSE,
  SNIPPET_OPEN,
  type SearchChanges,
  type SearchCheckpoint,
  type SearchHit,
  type SearchIndex,
  type SearchItemKind,
  type SearchPage,
  type SearchRequest,
} from "./searchIndex.js";
import { toFts5Match } from "./searchQuery.js";

/** Bumped when the tables change shape: an index of another schema is dropped and rebuilt from the log. */
const SCHEMA_VERSION = "1";
/** Words a snippet shows around the match (FTS5 allows up to 64). */
const SNIPPET_TOKENS = 16;
/** The smallest window of ranked matches a search filters (see search()). */
const MIN_WINDOW = 64;

type HitRow = [
  itemId: string,
  threadId: string,
  runId: string | null,
  position: number,
  itemType: string,
  kind: string,
  createdAt: string,
  title: string,
  projectId: string,
  snippet: string,
  /** How many ranked matches the query's window held: fewer than the window means every match was seen. */
  windowed: number,
];

/**
 * The search index on SQLite FTS5, in a database file of its own
 * (`<state-dir>/search.db`) so that indexing never takes the event log's
 * write lock. Documents live in `search_items` (metadata) and `search_text`
 * (an FTS5 table whose rowid is the item's rowid; unicode61 tokenizer,
 * accents removed); threads in `search_threads`; the position and mapping
 * version in `search_meta`. Ranking is FTS5's bm25, newest first on ties.
 */
export class SqliteSearchIndex implements SearchIndex {
  readonly backend = "sqlite";
  private readonly statements = new Map<string, Statement<unknown[], HitRow>>();
  private readonly readMeta: Statement<[string], string>;
  private readonly countWindow: Statement<[string, number], number>;
  private readonly writeMeta: Statement<[string, string]>;
  private readonly upsertThread: Statement<[string, string, string, string, number, number]>;
  private readonly deleteThreadText: Statement<[string]>;
  private readonly deleteThreadItems: Statement<[string]>;
  private readonly findItem: Statement<[string], number>;
  private readonly threadDeleted: Statement<[string], number>;
  private readonly insertItem: Statement<[string, string, string | null, number, string, string, string]>;
  private readonly updateItem: Statement<[string, string | null, number, string, string, string, number]>;
  private readonly deleteText: Statement<[number]>;
  private readonly insertText: Statement<[number, string]>;
  private readonly applyBatch: (changes: SearchChanges, through: number) => void;
  private closed = false;

  /** Open (creating) the index file; ":memory:" for a throwaway one. */
  static open(filePath: string): SqliteSearchIndex {
    if (filePath !== ":memory:") mkdirSync(dirname(filePath), { recursive: true });
    const db = new BetterSqlite3(filePath);
    try {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("busy_timeout = 5000");
      migrate(db);
      return new SqliteSearchIndex(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(private readonly db: Database) {
    this.readMeta = db.prepare<[string], string>("SELECT value FROM search_meta WHERE key = ?").pluck();
    this.countWindow = db.prepare<[string, number], number>("SELECT count(*) FROM (SELECT rowid FROM search_text WHERE search_text MATCH ? LIMIT ?)").pluck();
    this.writeMeta = db.prepare("INSERT INTO search_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    this.upsertThread = db.prepare(`
      INSERT INTO search_threads (thread_id, project_id, title, relation, archived, deleted) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (thread_id) DO UPDATE SET project_id = excluded.project_id, title = excluded.title, relation = excluded.relation,
        archived = excluded.archived, deleted = excluded.deleted`);
    this.deleteThreadText = db.prepare("DELETE FROM search_text WHERE rowid IN (SELECT rowid FROM search_items WHERE thread_id = ?)");
    this.deleteThreadItems = db.prepare("DELETE FROM search_items WHERE thread_id = ?");
    this.findItem = db.prepare<[string], number>("SELECT rowid FROM search_items WHERE item_id = ?").pluck();
    this.threadDeleted = db.prepare<[string], number>("SELECT deleted FROM search_threads WHERE thread_id = ?").pluck();
    this.insertItem = db.prepare(
      "INSERT INTO search_items (item_id, thread_id, run_id, position, item_type, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    this.updateItem = db.prepare(
      "UPDATE search_items SET thread_id = ?, run_id = ?, position = ?, item_type = ?, kind = ?, created_at = ? WHERE rowid = ?",
    );
    this.deleteText = db.prepare("DELETE FROM search_text WHERE rowid = ?");
    this.insertText = db.prepare("INSERT INTO search_text (rowid, text) VALUES (?, ?)");
    this.applyBatch = db.transaction((changes: SearchChanges, through: number) => this.write(changes, through));
  }

  checkpoint(): Promise<SearchCheckpoint> {
    return settle(() => {
      this.assertOpen();
      return { position: Number(this.readMeta.get("position") ?? "0"), version: this.readMeta.get("version") ?? null };
    });
  }

  apply(changes: SearchChanges, through: number): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.applyBatch(changes, through);
    });
  }

  reset(version: string): Promise<void> {
    return settle(() => {
      this.assertOpen();
      this.db.transaction(() => {
        this.db.exec("DELETE FROM search_text; DELETE FROM search_items; DELETE FROM search_threads;");
        this.writeMeta.run("position", "0");
        this.writeMeta.run("version", version);
      })();
    });
  }

  search(request: SearchRequest): Promise<SearchPage> {
    return settle(() => {
      this.assertOpen();
      const { sql, params } = this.query(request);
      let statement = this.statements.get(sql);
      if (statement === undefined) {
        statement = this.db.prepare<unknown[], HitRow>(sql).raw();
        this.statements.set(sql, statement);
      }
      const match = toFts5Match(request.terms);
      // FTS5 ranks natively (its ORDER BY rank LIMIT path) within a window of
      // the best matches, and the filters run on the window only. When the
      // filters leave too few rows and the window did not hold every match,
      // the window doubles: a page costs about what a plain FTS5 query does.
      const wanted = request.offset + request.limit + 1;
      for (let window = Math.max(MIN_WINDOW, wanted * 2); ; window *= 2) {
        const rows = statement.all(match, window, ...params, request.limit + 1, request.offset);
        // A row carries the window's size; when the filters kept none, count the window itself.
        const windowed = rows.length > 0 ? rows[0]![10] : this.countWindow.get(match, window)!;
        const exhausted = windowed < window;
        if (rows.length > request.limit || exhausted) {
          return { hits: rows.slice(0, request.limit).map(toHit), hasMore: rows.length > request.limit };
        }
      }
    });
  }

  close(): Promise<void> {
    return settle(() => {
      if (this.closed) return;
      this.closed = true;
      this.db.close();
    });
  }

  private query(request: SearchRequest): { sql: string; params: unknown[] } {
    const where: string[] = ["t.deleted = 0"];
    const params: unknown[] = [];
    if (request.projectId !== null) {
      where.push("t.project_id = ?");
      params.push(request.projectId);
    }
    if (request.threadId !== null) {
      where.push("i.thread_id = ?");
      params.push(request.threadId);
    }
    if (request.kinds !== null) {
      where.push(`i.kind IN (${request.kinds.map(() => "?").join(", ")})`);
      params.push(...request.kinds);
    }
    if (!request.includeArchived) where.push("t.archived = 0");
    if (!request.includeSubagents) where.push("t.relation <> 'subagent'");
    // The window of best matches, ranked (and snippeted) by FTS5 alone; then
    // the filters and the page. See search() for how the window grows.
    const sql = `
      WITH top AS (
        SELECT rowid AS id, rank AS score, snippet(search_text, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '…', ${SNIPPET_TOKENS}) AS snippet
        FROM search_text
        WHERE search_text MATCH ?
        ORDER BY rank
        LIMIT ?
      )
      SELECT i.item_id, i.thread_id, i.run_id, i.position, i.item_type, i.kind, i.created_at, t.title, t.project_id, top.snippet,
             (SELECT count(*) FROM top) AS windowed
      FROM top
      JOIN search_items i ON i.rowid = top.id
      JOIN search_threads t ON t.thread_id = i.thread_id
      WHERE ${where.join(" AND ")}
      ORDER BY top.score, top.id DESC
      LIMIT ? OFFSET ?`;
    return { sql, params };
  }

  private write(changes: SearchChanges, through: number): void {
    for (const thread of changes.threads) {
      this.upsertThread.run(thread.threadId, thread.projectId, thread.title, thread.relation, thread.archived ? 1 : 0, thread.deleted ? 1 : 0);
      // A deleted thread's content leaves the index; its row stays so late items are filtered too.
      if (thread.deleted) {
        this.deleteThreadText.run(thread.threadId);
        this.deleteThreadItems.run(thread.threadId);
      }
    }
    for (const doc of changes.documents) {
      if (this.threadDeleted.get(doc.threadId) === 1) continue;
      const rowid = this.findItem.get(doc.itemId);
      if (rowid === undefined) {
        const inserted = this.insertItem.run(doc.itemId, doc.threadId, doc.runId, doc.position, doc.itemType, doc.kind, doc.createdAt);
        this.insertText.run(Number(inserted.lastInsertRowid), doc.text);
      } else {
        this.updateItem.run(doc.threadId, doc.runId, doc.position, doc.itemType, doc.kind, doc.createdAt, rowid);
        this.deleteText.run(rowid);
        this.insertText.run(rowid, doc.text);
      }
    }
    this.writeMeta.run("position", String(through));
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError(StoreErrorCode.closed, "the SQLite search index is closed");
  }
}

function toHit(row: HitRow): SearchHit {
  return {
    itemId: row[0],
    threadId: row[1],
    runId: row[2],
    position: row[3],
    itemType: row[4],
    kind: row[5] as SearchItemKind,
    createdAt: row[6],
    threadTitle: row[7],
    projectId: row[8],
    snippet: row[9],
  };
}

function migrate(db: Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS search_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const schema = db.prepare<[], string>("SELECT value FROM search_meta WHERE key = 'schema'").pluck().get();
  if (schema === SCHEMA_VERSION) return;
  db.transaction(() => {
    db.exec(`
      DROP TABLE IF EXISTS search_text;
      DROP TABLE IF EXISTS search_items;
      DROP TABLE IF EXISTS search_threads;
      DELETE FROM search_meta;
      CREATE TABLE search_threads (
        thread_id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        title TEXT NOT NULL,
        relation TEXT NOT NULL,
        archived INTEGER NOT NULL,
        deleted INTEGER NOT NULL
      );
      CREATE TABLE search_items (
        rowid INTEGER PRIMARY KEY,
        item_id TEXT NOT NULL UNIQUE,
        thread_id TEXT NOT NULL,
        run_id TEXT,
        position INTEGER NOT NULL,
        item_type TEXT NOT NULL,
        kind TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX search_items_thread ON search_items (thread_id);
      CREATE VIRTUAL TABLE search_text USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
    `);
    db.prepare("INSERT INTO search_meta (key, value) VALUES ('schema', ?)").run(SCHEMA_VERSION);
  })();
}
