/**
 * Wire id interning (spec 004 §1 invariant 4, §3.3 `compactIds`): every
 * `id`, `*Id` and `*Ids` field of a record is replaced by integer indices
 * into one `ids: Array<string | number>` table, so the long derived ids a
 * transcript repeats on every item cross the wire once.
 *
 * The rule is schema-free and exact for any JSON value, so expansion gives
 * back exactly what was interned:
 * - an `id` / `*Id` field holding a string or a number becomes the index of
 *   that value in the table (a number is interned too, so an index is never
 *   mistaken for an original number);
 * - each string or number element of a `*Ids` array becomes an index;
 * - anything else (null, booleans, objects, arrays under an `*Id` key) is kept
 *   and walked into.
 * Expansion replaces every number in those same positions by its table entry.
 */

export type IdValue = string | number;

/** True for the keys whose values are interned: `id`, `fooId`, and (for arrays) `fooIds`. */
export function isIdKey(key: string): boolean {
  return key === "id" || (key.length > 2 && key.endsWith("Id"));
}

export function isIdListKey(key: string): boolean {
  return key === "ids" || (key.length > 3 && key.endsWith("Ids"));
}

/**
 * A growing id table. One interner serves one record or one stream: the
 * table of a stream grows with each update, and each update carries only the
 * entries it added (`intern(...).added`).
 */
export class IdInterner {
  private readonly index = new Map<IdValue, number>();
  private size = 0;

  /** How many entries the table holds. */
  get length(): number {
    return this.size;
  }

  /** Intern `value`'s ids; `added` lists the new table entries in index order. */
  intern<T>(value: T): { readonly value: T; readonly added: IdValue[] } {
    const added: IdValue[] = [];
    const slot = (id: IdValue): number => {
      const known = this.index.get(id);
      if (known !== undefined) return known;
      const next = this.size++;
      this.index.set(id, next);
      added.push(id);
      return next;
    };
    return { value: internValue(value, slot) as T, added };
  }
}

function internValue(value: unknown, slot: (id: IdValue) => number): unknown {
  if (Array.isArray(value)) return value.map((entry) => internValue(entry, slot));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (isIdKey(key) && (typeof field === "string" || typeof field === "number")) setField(out, key, slot(field));
    else if (isIdListKey(key) && Array.isArray(field)) setField(out, key, field.map((entry: unknown) => (typeof entry === "string" || typeof entry === "number" ? slot(entry) : internValue(entry, slot))));
    else setField(out, key, internValue(field, slot));
  }
  return out;
}

/** An own property even for `__proto__` (a JSON key like any other), so the round trip stays exact. */
export function setField(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The other side of an IdInterner: keeps the table and expands records against it. */
export class IdExpander {
  private readonly table: IdValue[] = [];

  /** Append table entries (a record's `ids`, or a stream update's new ones), then expand `value`. */
  expand<T>(value: T, added: readonly IdValue[] = []): T {
    for (const id of added) this.table.push(id);
    return expandValue(value, this.table) as T;
  }
}

function lookup(table: readonly IdValue[], index: number): IdValue {
  const id = table[index];
  if (id === undefined) throw new RangeError(`id index ${index} is outside the id table (${table.length} entries)`);
  return id;
}

function expandValue(value: unknown, table: readonly IdValue[]): unknown {
  if (Array.isArray(value)) return value.map((entry) => expandValue(entry, table));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (isIdKey(key) && typeof field === "number") setField(out, key, lookup(table, field));
    else if (isIdListKey(key) && Array.isArray(field)) setField(out, key, field.map((entry: unknown) => (typeof entry === "number" ? lookup(table, entry) : expandValue(entry, table))));
    else setField(out, key, expandValue(field, table));
  }
  return out;
}

/** A record with its own id table: `{ ids, record }`. */
export interface IdTabled<T> {
  readonly ids: IdValue[];
  readonly record: T;
}

/** Intern one record with a fresh table (an HTTP answer, a WebSocket response). */
export function withIdTable<T>(record: T): IdTabled<T> {
  const { value, added } = new IdInterner().intern(record);
  return { ids: added, record: value };
}

/** Expand a record interned by withIdTable. */
export function expandIdTable<T>(tabled: IdTabled<T>): T {
  return new IdExpander().expand(tabled.record, tabled.ids);
}
