import { createHash } from "node:crypto";
import { deserialize, serialize } from "node:v8";
import { EventType } from "../contracts/eventTypes.js";
import { type OrchestrationState, STATE_FOLD_VERSION, initialState } from "../core/state.js";
import { itemsForSnapshot } from "./hotTurnItems.js";

/**
 * The folded state to bytes and back, for start-up from a snapshot
 * (docs/architecture.md, "Snapshots"). V8's structured serialization keeps
 * what JSON would lose: Maps and Sets with their insertion order, holes in
 * the per-thread item arrays, undefined values, and objects shared between
 * two maps stay one object.
 */

/** Bump when the byte format changes (another serializer, a wrapper around the state). */
const SERIALIZER_VERSION = "v8-structured/1";

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
 * and the event types the fold knows (a log another build wrote with newer
 * types was folded as "unknown" by an older build).
 */
export const STATE_SNAPSHOT_VERSION: string = snapshotVersion(STATE_FOLD_VERSION, stateShape());

export function snapshotVersion(foldVersion: number, shape: readonly string[]): string {
  const identity = JSON.stringify({ serializer: SERIALIZER_VERSION, fold: foldVersion, shape, events: Object.values(EventType).sort() });
  return `state-${createHash("sha256").update(identity).digest("hex").slice(0, 32)}`;
}

export class SnapshotDecodeError extends Error {
  override readonly name = "SnapshotDecodeError";
}

/**
 * The state's bytes. When the store keeps the turn items (the state's item
 * maps are caches over it: hotTurnItems.ts) they are left out: start-up reads
 * them from the store again on demand.
 */
export function encodeState(state: Readonly<OrchestrationState>): Uint8Array {
  return serialize({ ...state, ...itemsForSnapshot(state) });
}

/** The state a snapshot body holds; throws SnapshotDecodeError when the bytes are not a state of this shape. */
export function decodeState(body: Uint8Array): OrchestrationState {
  let value: unknown;
  try {
    value = deserialize(body);
  } catch (error) {
    throw new SnapshotDecodeError("the snapshot body is not a serialized state", { cause: error });
  }
  if (typeof value !== "object" || value === null) throw new SnapshotDecodeError("the snapshot body is not an object");
  const shape = Object.entries(value).map(([name, field]) => `${name}:${fieldKind(field)}`);
  if (JSON.stringify(shape) !== JSON.stringify(stateShape())) throw new SnapshotDecodeError("the snapshot's fields are not the state's");
  const state = value as OrchestrationState;
  if (!Number.isSafeInteger(state.lastSequence) || state.lastSequence < 0) throw new SnapshotDecodeError("the snapshot has no log position");
  return state;
}
