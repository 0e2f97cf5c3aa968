import type { Database, Statement } from "better-sqlite3";
import type { TurnItem } from "../../contracts/turnItems.js";
import type { TurnItemReader } from "../eventStore.js";
import { byPosition, turnItemKey } from "../turnItemRows.js";

/**
 * The turn items' read model of the SQLite store (table `turn_items`,
 * migration 3): written inside the commit transaction, read synchronously on
 * the same connection, so a read inside a decision sees the log as of that
 * decision.
 */
/** The item reads of TurnItemReader; the store adds the log page beside the items. */
export class SqliteTurnItems implements Pick<TurnItemReader, "threadItems" | "threadOfItem"> {
  private readonly upsert: Statement<[string, number, string, string]>;
  private readonly selectThread: Statement<[string], string>;
  private readonly selectThreadOf: Statement<[string], string>;

  constructor(db: Database) {
    this.upsert = db.prepare(`
      INSERT INTO turn_items (thread_id, position, item_id, data) VALUES (?, ?, ?, ?)
      ON CONFLICT (thread_id, position) DO UPDATE SET item_id = excluded.item_id, data = excluded.data`);
    this.selectThread = db.prepare<[string], string>("SELECT data FROM turn_items WHERE thread_id = ? ORDER BY position").pluck();
    this.selectThreadOf = db.prepare<[string], string>("SELECT thread_id FROM turn_items WHERE item_id = ? LIMIT 1").pluck();
  }

  /** Inside the commit transaction: keep the item an event carries (any other event is ignored). */
  keep(type: string, data: unknown, json: string): void {
    const key = turnItemKey(type, data);
    if (key !== null) this.upsert.run(key.threadId, key.position, key.itemId, json);
  }

  threadItems(threadId: string): TurnItem[] {
    return byPosition(this.selectThread.all(threadId).map((json) => (JSON.parse(json) as { item: TurnItem }).item));
  }

  threadOfItem(itemId: string): string | null {
    return this.selectThreadOf.get(itemId) ?? null;
  }
}
