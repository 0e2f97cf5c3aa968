import { StoreError, StoreErrorCode } from "./storeErrors.js";

/**
 * A versioned schema change. Each backend keeps its own list; append new
 * migrations at the end with the next version and never edit or reorder one
 * that has shipped, since databases record which versions they applied.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** A migration recorded in a database's schema_migrations table. */
export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  readonly appliedAt: string;
}

/** Throws unless versions are positive integers in strictly increasing order. */
export function assertOrdered(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const migration of migrations) {
    if (!Number.isInteger(migration.version) || migration.version <= previous) {
      throw new Error(`migrations must have strictly increasing positive integer versions (at "${migration.name}")`);
    }
    previous = migration.version;
  }
}

/**
 * Refuse a database that records versions this build does not know (it was
 * migrated by a newer build) rather than run against a schema it does not understand.
 */
export function assertNoUnknownVersions(migrations: readonly Migration[], recorded: readonly number[]): void {
  const known = new Set(migrations.map((migration) => migration.version));
  const unknown = recorded.filter((version) => !known.has(version));
  if (unknown.length > 0) {
    throw new StoreError(
      StoreErrorCode.unknownMigration,
      `database has schema versions this build does not know: ${unknown.join(", ")}`,
    );
  }
}
