import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../contracts/envelopes.js";
import { EVENT_TYPES, toDomainEvent } from "../contracts/events.js";
import { aProviderThread, aUserMessage, itemEvent } from "../core/testing/runFixtures.js";
import { fold } from "../core/testing/scenario.js";
import { existing } from "../core/testing/fixtures.js";
import { type OrchestrationState, STATE_FOLD_VERSION, evolve, initialState } from "../core/state.js";
import { runSeed } from "../testkit/sim/runner.js";
import { SnapshotDecodeError, STATE_SNAPSHOT_VERSION, decodeState, encodeState, snapshotVersion, stateFrames, stateShape } from "./stateSnapshot.js";

/**
 * A snapshot plus the tail of the log folds to exactly the state a full
 * replay folds to, at any cut, on logs the simulator writes (threads, runs,
 * attempts, delegations, waits, crashes and restarts), compared field by
 * field and byte for byte.
 */

function foldStored(events: readonly StoredEvent[], into: OrchestrationState = initialState()): OrchestrationState {
  for (const stored of events) {
    evolve(into, toDomainEvent(stored));
    into.lastSequence = stored.sequence;
  }
  return into;
}

/**
 * The state as text that keeps everything order- and shape-sensitive: Map and
 * Set order, object key order, holes, undefined. (The serialized bytes are no
 * such witness: V8 may write the same empty array in two encodings.)
 */
function canonical(value: unknown): unknown {
  if (value === undefined) return { "@undefined": true };
  if (value instanceof Map) return { "@map": [...(value as Map<unknown, unknown>)].map(([key, entry]): unknown[] => [key, canonical(entry)]) };
  if (value instanceof Set) return { "@set": [...value].map(canonical) };
  if (Array.isArray(value)) {
    const array = value as unknown[];
    return Array.from({ length: array.length }, (_, i): unknown => (i in array ? canonical(array[i]) : { "@hole": true }));
  }
  if (typeof value === "object" && value !== null) return Object.entries(value).map(([key, entry]) => [key, canonical(entry)]);
  return value;
}

const same = (state: OrchestrationState): string => JSON.stringify(canonical(state));

function viaSnapshot(log: readonly StoredEvent[], cut: number): OrchestrationState {
  const snapshot = encodeState(foldStored(log.slice(0, cut)));
  return foldStored(log.slice(cut), decodeState(snapshot));
}

describe("state snapshot: snapshot + tail = full replay", () => {
  const logs: StoredEvent[][] = [];
  beforeAll(async () => {
    for (const seed of [3, 8, 21]) {
      const result = await runSeed({ seed, store: "memory" });
      logs.push([...result.log]);
    }
  }, 120_000);

  it("has simulator logs with runs, delegations and recorded waits to cut", () => {
    const full = logs.map((log) => foldStored(log));
    expect(Math.min(...logs.map((log) => log.length))).toBeGreaterThan(100);
    expect(full.some((state) => state.tasks.size > 0)).toBe(true);
    expect(full.every((state) => state.runs.size > 0 && state.attempts.size > 0)).toBe(true);
  });

  it("folds to the same state at every cut fast-check picks", () => {
    fc.assert(
      fc.property(fc.nat(logs.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), (which, at) => {
        const log = logs[which]!;
        const cut = Math.floor(at * log.length);
        const full = foldStored(log);
        const restored = viaSnapshot(log, cut);
        expect(restored).toStrictEqual(full);
        expect(same(restored)).toBe(same(full));
      }),
      { numRuns: 60 },
    );
  });

  it("keeps Map and Set order, holes in item arrays and shared records exactly", () => {
    const thread = aProviderThread("thread:a");
    const state = fold(existing(thread), itemEvent(aUserMessage("thread:a", null, 0, "item:0", "msg:0", "hi")), itemEvent(aUserMessage("thread:a", null, 3, "item:3", "msg:3", "later")));
    state.openWaits.set("thread:a", new Set(["node:z", "node:a"]));
    state.clientRequests.set("k2", { key: "k2" } as never);
    state.clientRequests.set("k1", { key: "k1" } as never);
    state.lastSequence = 9;
    const back = decodeState(encodeState(state));
    expect(back).toStrictEqual(state);
    expect(same(back)).toBe(same(state));
    const items = back.turnItems.get("thread:a")!;
    expect([items.length, 1 in items, 2 in items, 3 in items]).toEqual([4, false, false, true]);
    expect([...back.openWaits.get("thread:a")!]).toEqual(["node:z", "node:a"]);
    expect([...back.clientRequests.keys()]).toEqual(["k2", "k1"]);
  });
});

describe("state snapshot version", () => {
  it("changes with the event types the fold knows: a name of the table more, and not with their order", () => {
    expect(snapshotVersion(STATE_FOLD_VERSION, stateShape(), [...EVENT_TYPES].reverse())).toBe(STATE_SNAPSHOT_VERSION);
    expect(snapshotVersion(STATE_FOLD_VERSION, stateShape(), [...EVENT_TYPES, "plan.updated"])).not.toBe(STATE_SNAPSHOT_VERSION);
    expect(snapshotVersion(STATE_FOLD_VERSION, stateShape(), EVENT_TYPES.filter((type) => type !== "workflow.step.updated"))).not.toBe(STATE_SNAPSHOT_VERSION);
  });

  it("changes with the fold's version and with the state's fields, and not otherwise", () => {
    expect(snapshotVersion(STATE_FOLD_VERSION, stateShape())).toBe(STATE_SNAPSHOT_VERSION);
    expect(snapshotVersion(STATE_FOLD_VERSION + 1, stateShape())).not.toBe(STATE_SNAPSHOT_VERSION);
    expect(snapshotVersion(STATE_FOLD_VERSION, [...stateShape(), "extra:map"])).not.toBe(STATE_SNAPSHOT_VERSION);
    expect(snapshotVersion(STATE_FOLD_VERSION, stateShape().map((field) => field.replace("openWaits:map", "openWaits:object")))).not.toBe(STATE_SNAPSHOT_VERSION);
  });

  it("refuses bytes that are not a state of this shape", () => {
    expect(() => decodeState(new Uint8Array([1, 2, 3]))).toThrow(SnapshotDecodeError);
    const { turnItems: _dropped, ...older } = initialState();
    expect(() => decodeState(encodeState(older as unknown as OrchestrationState))).toThrow(/fields/);
    expect(() => decodeState(encodeState({ ...initialState(), lastSequence: -1 }))).toThrow(/position/);
  });

  it("refuses a body cut anywhere or with bytes after its last frame", () => {
    const state = fold(...Array.from({ length: 2_500 }, (_, i) => existing(aProviderThread(`thread:${i}`))));
    const body = encodeState(state);
    for (const length of [0, 3, 4, 100, Math.floor(body.byteLength / 2), body.byteLength - 1]) {
      expect(() => decodeState(body.subarray(0, length))).toThrow(SnapshotDecodeError);
    }
    expect(() => decodeState(Buffer.concat([body, new Uint8Array([0])]))).toThrow(/after its last frame/);
    expect(decodeState(body)).toStrictEqual(state);
  });
});

describe("state snapshot frames", () => {
  it("are the state of the moment they were taken, however the fold moves on while they are serialized", () => {
    const thread = (i: number): ReturnType<typeof aProviderThread> => aProviderThread(`thread:${i}`);
    const state = fold(...Array.from({ length: 2_500 }, (_, i) => existing(thread(i))));
    state.threadRuns.set("thread:0", ["run:a"]);
    state.openWaits.set("thread:0", new Set(["node:a"]));
    state.lastSequence = 2_500;
    const before = same(state);
    const frames = stateFrames(state)[Symbol.iterator]();
    const parts = [frames.next().value!, frames.next().value!];
    // The fold moves on between two slices: new records, ids pushed in place, a set grown, a thread gone, a record replaced.
    evolve(state, existing(thread(9_999)));
    state.threadRuns.get("thread:0")!.push("run:b");
    state.openWaits.get("thread:0")!.add("node:b");
    state.threads.delete("thread:2000");
    state.threads.set("thread:2100", { ...state.threads.get("thread:2100")!, title: "renamed later" });
    state.lastSequence = 2_502;
    for (let part = frames.next(); part.done !== true; part = frames.next()) parts.push(part.value);
    expect(parts.length).toBeGreaterThan(3);
    expect(same(decodeState(Buffer.concat(parts)))).toBe(before);
  });
});
