import { createHash } from "node:crypto";
import { deserialize, serialize } from "node:v8";
import { EVENT_TYPES } from "../contracts/events.js";
import { type OrchestrationState, STATE_FOLD_VERSION, initialState } from "../core/state.js";
import { itemsForSnapshot } from "./hotTurnItems.js";

/**
 * The folded state to bytes and back, for start-up from a snapshot
 * (docs/architecture.md, "Snapshots"). V8's structured serialization keeps
 * what JSON would lose: Maps and Sets with their insertion order, holes in
 * the per-thread item arrays, undefined values. The bytes are frames, each a
 * 4-byte length and one serialized value: a header (the fields, their kinds
 * and sizes, the scalar fields' values), then each Map's and Set's entries in
 * slices of SLICE_ENTRIES, so a save can serialize a slice at a time and let
 * the event loop run between slices (snapshotWriter.ts).
 */

/** Bump when the byte format changes (another serializer, a wrapper around the state). */
const SERIALIZER_VERSION = "v8-structured-slices/2";

/** Entries of a Map or Set serialized in one frame. */
const SLICE_ENTRIES = 1_000;

/** What a field of the state is; a snapshot whose fields differ from the code's is not this code's state. */
function fieldKind(value: unknown): string {
  if (value instanceof Map) return "map";
  if (value instanceof Set) return "set";
  return typeof value;
}

/** The state's shape: each field and its kind, in declaration order. */
export function stateShape(): string[] {
  return Object.entries(initialState()).map(([name, value]) => `${name}:${fieldKind(value)}`);
}

/**
 * The version every snapshot this code writes carries, and the only one it
 * loads: a hash of the serializer, the fold's version, the state's fields
 * and the event types the fold knows, the event table's (a log another build
 * wrote with newer types was folded as "unknown" by an older build).
 */
export const STATE_SNAPSHOT_VERSION: string = snapshotVersion(STATE_FOLD_VERSION, stateShape());

export function snapshotVersion(foldVersion: number, shape: readonly string[], eventTypes: readonly string[] = EVENT_TYPES): string {
  const identity = JSON.stringify({ serializer: SERIALIZER_VERSION, fold: foldVersion, shape, events: [...eventTypes].sort() });
  return `state-${createHash("sha256").update(identity).digest("hex").slice(0, 32)}`;
}

export class SnapshotDecodeError extends Error {
  override readonly name = "SnapshotDecodeError";
}

interface Header {
  /** Each field: its name, its kind, and (Map, Set) its number of entries or (else) its value. */
  readonly fields: readonly [name: string, kind: string, sizeOrValue: unknown][];
}

/**
 * How the copy at the settled point takes each field of the state, so that
 * the frames serialized later are the state of that moment while the fold
 * moves on. `records`: a Map whose values the fold replaces and never
 * changes: its keys and values are taken as two flat arrays. `appended`: a
 * Map of id arrays the fold only pushes to: keys, values and each array's
 * length are taken, and a later slice cuts each array to that length.
 * `copied`: values the fold changes in place in other ways (sets that shrink,
 * item arrays written by position): copied entry by entry then, as are the
 * fields of an older shape that are not in this table. `scalar`: the value.
 */
const FieldCopy = { records: "records", appended: "appended", copied: "copied", scalar: "scalar" } as const;
type FieldCopy = (typeof FieldCopy)[keyof typeof FieldCopy];

const FIELD_COPY: { readonly [K in keyof OrchestrationState]: FieldCopy } = {
  threads: FieldCopy.records,
  runs: FieldCopy.records,
  threadRuns: FieldCopy.appended,
  attempts: FieldCopy.records,
  runAttempts: FieldCopy.appended,
  providerThreads: FieldCopy.records,
  providerTurns: FieldCopy.records,
  turnItems: FieldCopy.copied,
  itemThreads: FieldCopy.records,
  runtimeRequests: FieldCopy.records,
  providerSessions: FieldCopy.records,
  subagents: FieldCopy.records,
  tasks: FieldCopy.records,
  taskByChildThread: FieldCopy.records,
  nodes: FieldCopy.records,
  transfers: FieldCopy.records,
  clientRequests: FieldCopy.records,
  threadTransfers: FieldCopy.appended,
  handoffs: FieldCopy.records,
  threadHandoffs: FieldCopy.appended,
  openWaits: FieldCopy.copied,
  checkpointScopes: FieldCopy.records,
  checkpoints: FieldCopy.records,
  scopeCheckpoints: FieldCopy.appended,
  scheduledTasks: FieldCopy.records,
  scheduledRuns: FieldCopy.records,
  workflows: FieldCopy.records,
  mergeQueueEntries: FieldCopy.records,
  toolTasks: FieldCopy.records,
  limitWindows: FieldCopy.records,
  lastSequence: FieldCopy.scalar,
};

function copyOf(name: string): FieldCopy {
  return Object.hasOwn(FIELD_COPY, name) ? FIELD_COPY[name as keyof OrchestrationState] : FieldCopy.copied;
}

/** A Map's or Set's entries as of the copy, read a slice at a time afterwards. */
interface TakenCollection {
  readonly size: number;
  /** Entries `from` to `to` (a Map's as [key, value] pairs), as they were when taken. */
  slice(from: number, to: number): unknown[];
}

function take(value: Map<unknown, unknown> | Set<unknown>, how: FieldCopy): TakenCollection {
  if (value instanceof Set) {
    const members = Array.from(value);
    return { size: members.length, slice: (from, to) => members.slice(from, to) };
  }
  if (how === FieldCopy.copied) {
    const copy = (entry: unknown): unknown => (Array.isArray(entry) ? entry.slice() : entry instanceof Set ? new Set(entry) : entry);
    const entries = Array.from(value, ([key, entry]) => [key, copy(entry)]);
    return { size: entries.length, slice: (from, to) => entries.slice(from, to) };
  }
  const keys = Array.from(value.keys());
  const values = Array.from(value.values());
  if (how === FieldCopy.records) return { size: keys.length, slice: (from, to) => pairs(keys, values, from, to, (entry) => entry) };
  const lengths = Uint32Array.from(values, (ids) => (ids as unknown[]).length);
  return { size: keys.length, slice: (from, to) => pairs(keys, values, from, to, (ids, at) => (ids as unknown[]).slice(0, lengths[at])) };
}

function pairs(keys: readonly unknown[], values: readonly unknown[], from: number, to: number, entry: (value: unknown, at: number) => unknown): unknown[] {
  const end = Math.min(to, keys.length);
  const out: unknown[] = [];
  for (let at = from; at < end; at += 1) out.push([keys[at], entry(values[at], at)]);
  return out;
}

function frame(value: unknown): Uint8Array {
  const bytes = serialize(value);
  const framed = Buffer.allocUnsafe(4 + bytes.byteLength);
  framed.writeUInt32BE(bytes.byteLength, 0);
  bytes.copy(framed, 4);
  return framed;
}

/**
 * The state's bytes as frames, serialized one at a time as the iterator is
 * read. The state is taken when this is called (FIELD_COPY: flat arrays of
 * its maps' keys and values, and the lengths of the id arrays the fold
 * grows; not the records, which the fold replaces rather than changes), so
 * the frames are the state of that moment however far the fold moves on
 * meanwhile. When the
 * store keeps the turn items (the state's item maps are caches over it:
 * hotTurnItems.ts) they are left out: start-up reads them from the store.
 */
export function stateFrames(state: Readonly<OrchestrationState>): Iterable<Uint8Array> {
  const whole: Record<string, unknown> = { ...state, ...itemsForSnapshot(state) };
  const fields: [string, string, unknown][] = [];
  const collections: TakenCollection[] = [];
  for (const [name, value] of Object.entries(whole)) {
    const kind = fieldKind(value);
    if (value instanceof Map || value instanceof Set) {
      const taken = take(value as Map<unknown, unknown> | Set<unknown>, copyOf(name));
      fields.push([name, kind, taken.size]);
      collections.push(taken);
    } else fields.push([name, kind, value]);
  }
  const header: Header = { fields };
  return (function* frames(): Generator<Uint8Array> {
    yield frame(header);
    for (const taken of collections) for (let at = 0; at < taken.size; at += SLICE_ENTRIES) yield frame(taken.slice(at, at + SLICE_ENTRIES));
  })();
}

/** The state's bytes in one go (stateFrames, joined). */
export function encodeState(state: Readonly<OrchestrationState>): Uint8Array {
  return Buffer.concat([...stateFrames(state)]);
}

/** The state a snapshot body holds; throws SnapshotDecodeError when the bytes are not a state of this shape. */
export function decodeState(body: Uint8Array): OrchestrationState {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  const next = (): unknown => {
    if (at + 4 > bytes.byteLength) throw new SnapshotDecodeError("the snapshot body ends before its last frame");
    const length = bytes.readUInt32BE(at);
    if (at + 4 + length > bytes.byteLength) throw new SnapshotDecodeError("the snapshot body ends inside a frame");
    const start = at + 4;
    at = start + length;
    try {
      return deserialize(bytes.subarray(start, at));
    } catch (error) {
      throw new SnapshotDecodeError("the snapshot body is not a serialized state", { cause: error });
    }
  };
  const header = next() as Partial<Header> | null;
  if (typeof header !== "object" || header === null || !Array.isArray(header.fields)) throw new SnapshotDecodeError("the snapshot body is not a state's frames");
  const fields: Header["fields"] = header.fields;
  const shape = fields.map(([name, kind]) => `${name}:${kind}`);
  if (JSON.stringify(shape) !== JSON.stringify(stateShape())) throw new SnapshotDecodeError("the snapshot's fields are not the state's");
  const value: Record<string, unknown> = {};
  for (const [name, kind, sizeOrValue] of fields) {
    if (kind !== "map" && kind !== "set") {
      value[name] = sizeOrValue;
      continue;
    }
    const size = sizeOrValue as number;
    const map = new Map<unknown, unknown>();
    const set = new Set<unknown>();
    let read = 0;
    while (read < size) {
      const slice = next();
      if (!Array.isArray(slice) || slice.length === 0) throw new SnapshotDecodeError(`the snapshot's ${name} is cut short`);
      if (kind === "map") for (const [key, entry] of slice as [unknown, unknown][]) map.set(key, entry);
      else for (const entry of slice as unknown[]) set.add(entry);
      read += slice.length;
    }
    if (read !== size) throw new SnapshotDecodeError(`the snapshot's ${name} has ${read} entries, its header says ${size}`);
    value[name] = kind === "map" ? map : set;
  }
  if (at !== bytes.byteLength) throw new SnapshotDecodeError("the snapshot body has bytes after its last frame");
  const state = value as unknown as OrchestrationState;
  if (!Number.isSafeInteger(state.lastSequence) || state.lastSequence < 0) throw new SnapshotDecodeError("the snapshot has no log position");
  return state;
}
