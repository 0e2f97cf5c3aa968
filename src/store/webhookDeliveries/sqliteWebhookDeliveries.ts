import BetterSqlite3 from "better-sqlite3";
import type { Database, Statement } from "better-sqlite3";
import type { ClaimAnswer, DeliveryClaim, DeliveryRecord, WebhookDeliveryLedger } from "../../contracts/webhookDeliveries.js";

interface Row {
  readonly scheduled_task_id: string;
  readonly delivery_key: string;
  readonly received_at: number;
  readonly forget_at: number | null;
  readonly fire_command_id: string | null;
  readonly replays: number;
  readonly last_replay_at: number | null;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS webhook_deliveries (
    scheduled_task_id TEXT NOT NULL,
    delivery_key      TEXT NOT NULL,
    received_at       INTEGER NOT NULL,
    forget_at         INTEGER,
    fire_command_id   TEXT,
    replays           INTEGER NOT NULL DEFAULT 0,
    last_replay_at    INTEGER,
    PRIMARY KEY (scheduled_task_id, delivery_key)
  );
  CREATE INDEX IF NOT EXISTS webhook_deliveries_by_forget_at ON webhook_deliveries (forget_at) WHERE forget_at IS NOT NULL;
`;

/**
 * The accepted webhook deliveries in a SQLite file of the state directory
 * (`webhook-deliveries.db`), beside the webhook key file that a node needs
 * to verify a delivery in the first place: every process on the state
 * directory sees every claim, and a restart forgets none. A claim is one
 * IMMEDIATE transaction, so two processes taking the same delivery at once
 * get one `first`.
 */
export class SqliteWebhookDeliveries implements WebhookDeliveryLedger {
  private readonly db: Database;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly claimAll: (claim: DeliveryClaim) => ClaimAnswer;

  private constructor(path: string) {
    this.db = new BetterSqlite3(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.statements = prepareStatements(this.db);
    const claimAll = this.db.transaction((claim: DeliveryClaim): ClaimAnswer => {
      this.statements.forget.run(claim.receivedAt);
      for (const key of claim.keys) {
        const earlier = this.statements.one.get(claim.scheduledTaskId, key) as Row | undefined;
        if (earlier !== undefined) return { first: false, earlier: toRecord(earlier) };
      }
      for (const key of claim.keys) this.statements.insert.run(claim.scheduledTaskId, key, claim.receivedAt, claim.forgetAt, claim.fireCommandId);
      return { first: true };
    });
    this.claimAll = (claim) => claimAll.immediate(claim);
  }

  /** Open (creating) the ledger; ":memory:" for one that lives with the process. */
  static open(path: string): SqliteWebhookDeliveries {
    return new SqliteWebhookDeliveries(path);
  }

  claim(claim: DeliveryClaim): ClaimAnswer {
    return this.claimAll(claim);
  }

  recordReplay(scheduledTaskId: string, key: string, at: number): DeliveryRecord | null {
    this.statements.replay.run(at, scheduledTaskId, key);
    const row = this.statements.one.get(scheduledTaskId, key) as Row | undefined;
    return row === undefined ? null : toRecord(row);
  }

  list(scheduledTaskId: string): readonly DeliveryRecord[] {
    return (this.statements.ofTask.all(scheduledTaskId) as Row[]).map(toRecord);
  }

  forgetTask(scheduledTaskId: string): void {
    this.statements.forgetTask.run(scheduledTaskId);
  }

  close(): void {
    this.db.close();
  }
}

function prepareStatements(db: Database): Record<"forget" | "one" | "insert" | "replay" | "ofTask" | "forgetTask", Statement> {
  return {
    forget: db.prepare("DELETE FROM webhook_deliveries WHERE forget_at IS NOT NULL AND forget_at < ?"),
    one: db.prepare("SELECT * FROM webhook_deliveries WHERE scheduled_task_id = ? AND delivery_key = ?"),
    insert: db.prepare("INSERT INTO webhook_deliveries (scheduled_task_id, delivery_key, received_at, forget_at, fire_command_id) VALUES (?, ?, ?, ?, ?)"),
    replay: db.prepare("UPDATE webhook_deliveries SET replays = replays + 1, last_replay_at = ? WHERE scheduled_task_id = ? AND delivery_key = ?"),
    ofTask: db.prepare("SELECT * FROM webhook_deliveries WHERE scheduled_task_id = ? ORDER BY received_at, rowid"),
    forgetTask: db.prepare("DELETE FROM webhook_deliveries WHERE scheduled_task_id = ?"),
  };
}

function toRecord(row: Row): DeliveryRecord {
  return {
    scheduledTaskId: row.scheduled_task_id,
    key: row.delivery_key,
    receivedAt: row.received_at,
    forgetAt: row.forget_at,
    fireCommandId: row.fire_command_id,
    replays: row.replays,
    lastReplayAt: row.last_replay_at,
  };
}
