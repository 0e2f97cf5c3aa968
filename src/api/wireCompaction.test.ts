import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { StreamExpander, expandRecord } from "../client/wireExpansion.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { Subagent } from "../contracts/entities/subagents.js";
import type { TurnItem } from "../contracts/turnItems.js";
import { LruBodyMemory, dedupeThreadUpdate } from "../contracts/wire/dedupedBodies.js";
import { IdInterner, expandIdTable, withIdTable } from "../contracts/wire/idTable.js";
import type { BoundedSnapshot, ThreadStreamUpdate } from "../contracts/wire/projections.js";
import { Orchestrator } from "../engine/orchestrator.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { playRecordedThread, recordedProviderFacts, recordedTurns } from "../testkit/recordedThreads.js";
import { boundedSnapshot } from "../app/orchestration/threadViews.js";
import { wireEvent } from "../app/orchestration/subscriptions.js";
import { compactRecord } from "./wireCompaction.js";

/**
 * Wire compaction round trips (spec 004 §3.3): expand(compact(x)) deep-equals
 * x, for records and for live streams, on threads built from the drivers'
 * recorded real transcripts and on arbitrary JSON. Everything crosses a JSON
 * encoding in between, as on the wire.
 */

const THREAD = "thread:recorded";
let snapshot: BoundedSnapshot;
let events: StoredEvent[];

/** A subagent entity and the item naming it, for the prompt/result bodies the recorded transcripts lack. */
function subagentPair(n: number, prompt: string, result: string | null): { subagent: Subagent; item: TurnItem } {
  const base = snapshot.items.find((item) => item.type === "user_message")!;
  const subagentId = `subagent:${n}`;
  const subagent = { id: subagentId, threadId: THREAD, prompt, result } as unknown as Subagent;
  const item = { ...base, id: `turn-item:subagent-${n}`, type: "subagent", subagentId, prompt, result, status: "completed" } as unknown as TurnItem;
  return { subagent, item };
}

function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

beforeAll(async () => {
  const orchestrator = await Orchestrator.open({ store: new MemoryEventStore(), providers: recordedProviderFacts });
  // Every recorded transcript, twice over: one long thread of real turns.
  const turns = recordedTurns();
  await playRecordedThread(orchestrator, THREAD, [...turns, ...turns]);
  snapshot = await orchestrator.readCommitted((state) => boundedSnapshot(state, orchestrator.timeline, THREAD, 500));
  events = [];
  await new Promise<void>((resolve) => {
    const through = orchestrator.state.lastSequence;
    const subscription = orchestrator.follow(0, (event) => {
      if (event.streamId === THREAD) events.push(event);
      if (event.sequence >= through) {
        subscription.close();
        resolve();
      }
    });
  });
});

describe("record compaction round trip", () => {
  it("the recorded thread's bounded snapshot comes back exactly, and compaction shrinks it", () => {
    expect(snapshot.items.length).toBeGreaterThan(100);
    for (const options of [{ compactIds: true }, { dedupeBodies: true }, { compactIds: true, dedupeBodies: true }]) {
      const sent = JSON.stringify(compactRecord(snapshot, options));
      expect(expandRecord(JSON.parse(sent), options)).toEqual(wire(snapshot));
      if (options.compactIds) expect(sent.length).toBeLessThan(JSON.stringify(snapshot).length);
    }
  });

  it("any selection of recorded items, repeated bodies and subagents included, round-trips with every option", () => {
    const pairs = [subagentPair(1, "review the parser", "two bugs found"), subagentPair(2, "write the docs", null)];
    const pool: TurnItem[] = [...snapshot.items, ...pairs.map((pair) => pair.item)];
    const omitted = new Set<string>();
    const message = pool.findIndex((item) => item.type === "user_message" || item.type === "assistant_message");
    fc.assert(
      fc.property(
        fc.array(fc.nat(pool.length - 1), { maxLength: 60 }),
        fc.subarray(pairs.map((pair) => pair.subagent)),
        fc.boolean(),
        fc.boolean(),
        (picks, subagents, compactIds, dedupeBodies) => {
          const record = wire({ ...snapshot, items: picks.map((index) => pool[index]!), subagents });
          const options = { compactIds, dedupeBodies };
          const sent = wire(compactRecord(record, options));
          for (const flag of JSON.stringify(sent).match(/(text|prompt|result)Omitted/g) ?? []) omitted.add(flag);
          expect(expandRecord(sent, options)).toEqual(record);
        },
      ),
      // Besides the random runs, one that surely repeats a message and a subagent with both bodies.
      { numRuns: 200, examples: [[[message, message, pool.length - 2, pool.length - 2], [], false, true]] },
    );
    // The runs did exercise dedupe: repeated message texts and subagent bodies were left out.
    expect([...omitted].sort()).toEqual(["promptOmitted", "resultOmitted", "textOmitted"]);
  });

  it("id interning round-trips arbitrary JSON, whatever sits under id, *Id and *Ids keys", () => {
    const key = fc.constantFrom("id", "threadId", "runIds", "ids", "text", "Id", "n", "__proto__");
    fc.assert(
      fc.property(fc.object({ key, maxDepth: 4, values: [fc.jsonValue({ maxDepth: 2 })] }), (generated) => {
        const value = wire(generated);
        expect(expandIdTable(wire(withIdTable(value)))).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });
});

describe("stream compaction round trip", () => {
  it("a thread stream of recorded events, in any order and with repeats, expands exactly with the connection's bounded body memory", () => {
    const pairs = [subagentPair(3, "a prompt repeated on the stream", "a result")];
    const updates: ThreadStreamUpdate[] = [
      ...events.map((event): ThreadStreamUpdate => ({ kind: "event", event: wireEvent(event) })),
      { kind: "event", event: { sequence: 1, type: "subagent.updated", data: { subagent: pairs[0]!.subagent }, occurredAt: "2026-01-01T00:00:00.000Z" } },
      { kind: "event", event: { sequence: 2, type: "turn-item.updated", data: { item: pairs[0]!.item }, occurredAt: "2026-01-01T00:00:00.000Z" } },
      { kind: "delta", runId: "run:1", itemId: "turn-item:1", text: "partial" },
    ];
    let omitted = 0;
    fc.assert(
      fc.property(fc.array(fc.nat(updates.length - 1), { minLength: 1, maxLength: 120 }), fc.boolean(), fc.boolean(), (picks, compactIds, withSnapshot) => {
        // Server side: a per-subscription id table and the connection's last-32 body memory (wsConnection.ts).
        const serverBodies = new LruBodyMemory();
        const interner = compactIds ? new IdInterner() : null;
        const client = new StreamExpander({ compactIds, dedupeBodies: true }, new LruBodyMemory());
        const stream: ThreadStreamUpdate[] = [...(withSnapshot ? [{ kind: "snapshot", snapshot } as const] : []), ...picks.map((index) => updates[index]!)];
        for (const update of stream) {
          const deduped = dedupeThreadUpdate(wire(update), serverBodies, false);
          const { value, added } = interner === null ? { value: deduped, added: [] } : interner.intern(deduped);
          const received = wire({ update: value, ids: added });
          if (JSON.stringify(received).includes("Omitted")) omitted += 1;
          expect(client.expand(received.update, received.ids)).toEqual(wire(update));
        }
      }),
      { numRuns: 150 },
    );
    expect(omitted).toBeGreaterThan(0);
  });
});
