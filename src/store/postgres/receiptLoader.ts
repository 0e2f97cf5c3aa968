import type { Pool } from "pg";
import type { CommandReceipt } from "../../contracts/envelopes.js";

interface Waiter {
  readonly resolve: (receipt: CommandReceipt | null) => void;
  readonly reject: (error: unknown) => void;
}

/** Most commandIds looked up by one query. */
const CHUNK = 1_000;

/**
 * Coalesces receipt lookups made in the same tick into one query per chunk
 * of commandIds. The dispatcher looks up every command of a group commit at
 * once (Promise.all over lookupReceipt); one round trip instead of hundreds
 * keeps PostgreSQL's network latency off the command path.
 */
export class ReceiptLoader {
  private pending: Map<string, Waiter[]> | null = null;

  constructor(private readonly pool: Pool) {}

  load(commandId: string): Promise<CommandReceipt | null> {
    return new Promise((resolve, reject) => {
      if (this.pending === null) {
        this.pending = new Map();
        queueMicrotask(() => this.flush());
      }
      const waiters = this.pending.get(commandId);
      if (waiters === undefined) this.pending.set(commandId, [{ resolve, reject }]);
      else waiters.push({ resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = null;
    if (batch === null) return;
    const commandIds = [...batch.keys()];
    for (let start = 0; start < commandIds.length; start += CHUNK) {
      const chunk = commandIds.slice(start, start + CHUNK);
      this.pool
        .query<{ body: CommandReceipt }>({
          name: "loom_receipts_lookup",
          text: "SELECT body FROM receipts WHERE command_id = ANY($1::text[])",
          values: [chunk],
        })
        .then(
          (result) => {
            const found = new Map(result.rows.map((row) => [row.body.commandId, row.body]));
            for (const commandId of chunk) {
              for (const waiter of batch.get(commandId) ?? []) waiter.resolve(found.get(commandId) ?? null);
            }
          },
          (error: unknown) => {
            for (const commandId of chunk) for (const waiter of batch.get(commandId) ?? []) waiter.reject(error);
          },
        );
    }
  }
}
