import { StoreError, StoreErrorCode } from "../storeErrors.js";

/**
 * Where one store's log lives in a database, and the advisory lock keys
 * (two-int form) and notification channel that belong to it. Advisory locks
 * and LISTEN channels are per database; keying them by schema as well means
 * two logs in one database (one per schema) never contend or wake each other.
 */
export interface StoreNamespace {
  readonly schema: string;
  /**
   * Taken, transaction-scoped, by every commit before it reads the head of
   * the log. It serializes the log's writers, so sequences are assigned
   * without gaps and commits become visible in sequence order.
   */
  readonly logLock: AdvisoryLockKey;
  /** Taken while checking and applying schema migrations. */
  readonly migrationLock: AdvisoryLockKey;
  /** NOTIFY channel; the payload is the last sequence of the commit. */
  readonly channel: string;
}

export interface AdvisoryLockKey {
  readonly classId: number;
  readonly objectId: number;
}

export const DEFAULT_SCHEMA = "public";

/** "LOOM" as a 32-bit integer, and the next one: the lock classes of the log and of migrations. */
const LOG_LOCK_CLASS = 0x4c4f4f4d;
const MIGRATION_LOCK_CLASS = 0x4c4f4f4e;

/** Lower-case identifiers only: they need no quoting and the channel name stays under 63 bytes. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

export function storeNamespace(schema: string = DEFAULT_SCHEMA): StoreNamespace {
  if (!SCHEMA_NAME.test(schema)) {
    throw new StoreError(
      StoreErrorCode.badConfiguration,
      `schema ${JSON.stringify(schema)} is not a lower-case identifier of at most 48 characters ([a-z_][a-z0-9_]*)`,
    );
  }
  const objectId = fnv1a32(schema);
  return {
    schema,
    logLock: { classId: LOG_LOCK_CLASS, objectId },
    migrationLock: { classId: MIGRATION_LOCK_CLASS, objectId },
    channel: `loom_events_${schema}`,
  };
}

/** SQL that takes `key` until the current transaction ends. */
export function transactionLockSql(key: AdvisoryLockKey): string {
  return `SELECT pg_advisory_xact_lock(${key.classId}, ${key.objectId})`;
}

/** 32-bit FNV-1a of the UTF-8 bytes, as a signed int4 (what pg_advisory_xact_lock takes). */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
