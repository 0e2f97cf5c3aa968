/**
 * Local errors raised by EventStore backends. Each carries a stable string
 * code; none of them is retryable by simply calling again with the same input
 * (a closed store stays closed, unserializable data stays unserializable).
 */
export const StoreErrorCode = {
  /** The store (or its database) was closed; open a new one. */
  closed: "store_closed",
  /** Event data or an outbox payload has no JSON form (undefined, BigInt, a cycle). */
  notSerializable: "store_not_serializable",
  /**
   * SQLite assigned a sequence other than the one the receipt was written
   * for: something else wrote the log during the transaction. The batch is rolled back.
   */
  sequenceMismatch: "store_sequence_mismatch",
  /** The database was migrated by a newer build than this one. */
  unknownMigration: "store_unknown_migration",
  /** A store option is invalid (such as a PostgreSQL schema name that is not a plain identifier). */
  badConfiguration: "store_bad_configuration",
  /** A state snapshot with no version, or a sequence that is not a position of the log. */
  badSnapshot: "store_bad_snapshot",
} as const;
export type StoreErrorCode = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

export class StoreError extends Error {
  override readonly name = "StoreError";

  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The store was closed under the call: the process is stopping (or its
 * database went away). Every backend answers every read and write after
 * close, synchronous or not, with this error; callers treat it as a
 * shutdown, not as a fault.
 */
export function isStoreClosed(error: unknown): boolean {
  return error instanceof StoreError && error.code === StoreErrorCode.closed;
}

/**
 * Run synchronous backend work behind the async EventStore interface: a
 * throw becomes a rejected promise instead of escaping the call.
 */
export function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

/** Throw `store_bad_snapshot` unless the snapshot names a version and a position from 0 to `head`. */
export function assertSnapshotFits(snapshot: { readonly version: string; readonly sequence: number }, head: number): void {
  if (typeof snapshot.version !== "string" || snapshot.version === "") throw new StoreError(StoreErrorCode.badSnapshot, "a snapshot needs a non-empty version");
  if (!Number.isSafeInteger(snapshot.sequence) || snapshot.sequence < 0 || snapshot.sequence > head) {
    throw new StoreError(StoreErrorCode.badSnapshot, `snapshot sequence ${snapshot.sequence} is not a log position (the log ends at ${head})`);
  }
}
