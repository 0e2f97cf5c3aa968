import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ENTITY_KINDS, EntityPrefix, derive, joinId, makeAllocate } from "./ids.js";

function counterUuid(): () => string {
  let n = 0;
  return () => {
    n += 1;
    return `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  };
}

describe("makeAllocate", () => {
  it("mints prefix:uuid for all 17 entity kinds", () => {
    const allocate = makeAllocate(counterUuid());
    expect(ENTITY_KINDS).toHaveLength(17);
    const minted = ENTITY_KINDS.map((kind) => allocate[kind]());
    expect(minted).toEqual(
      ENTITY_KINDS.map((kind, i) => `${EntityPrefix[kind]}:00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`),
    );
    expect(minted).toContain("run-attempt:00000000-0000-4000-8000-000000000003");
    expect(minted).toContain("context-transfer:00000000-0000-4000-8000-000000000016");
  });

  it("asks the uuid source once per id", () => {
    const allocate = makeAllocate(counterUuid());
    expect(allocate.thread()).toBe("thread:00000000-0000-4000-8000-000000000001");
    expect(allocate.thread()).toBe("thread:00000000-0000-4000-8000-000000000002");
  });
});

describe("joinId", () => {
  it("keeps the prefix and encodes every part", () => {
    expect(joinId("p", "a:b", "50%", 7, "")).toBe("p:a%3Ab:50%25:7:");
  });
});

describe("derive formats", () => {
  it("threadFromProviderThread", () => {
    expect(derive.threadFromProviderThread({ driver: "codex", nativeThreadId: "t:1" })).toBe(
      "thread:provider:codex:native-thread:t%3A1",
    );
    expect(derive.threadFromProviderThread({ driver: "codex", providerInstanceId: "in%st", nativeThreadId: "t1" })).toBe(
      "thread:provider:codex:provider-instance:in%25st:native-thread:t1",
    );
    expect(derive.threadFromProviderThread({ driver: "codex", providerInstanceId: null, nativeThreadId: "t1" })).toBe(
      derive.threadFromProviderThread({ driver: "codex", nativeThreadId: "t1" }),
    );
  });

  it("runFromThreadOrdinal and runAttemptFromOrdinal", () => {
    expect(derive.runFromThreadOrdinal({ threadId: "thread:abc", ordinal: 3 })).toBe("run:thread:thread%3Aabc:ordinal:3");
    expect(derive.runAttemptFromOrdinal({ runId: "run:x", attemptOrdinal: 2 })).toBe("run-attempt:run:run%3Ax:attempt:2");
    expect(() => derive.runFromThreadOrdinal({ threadId: "t", ordinal: -1 })).toThrow(RangeError);
    expect(() => derive.runAttemptFromOrdinal({ runId: "r", attemptOrdinal: 1.5 })).toThrow(RangeError);
  });

  it("providerSessionShared and providerSessionForThread", () => {
    expect(derive.providerSessionShared({ providerInstanceId: "codex:main" })).toBe(
      "provider-session:provider-instance:codex%3Amain:shared",
    );
    expect(derive.providerSessionForThread({ providerInstanceId: "i", threadId: "thread:1" })).toBe(
      "provider-session:provider-instance:i:thread:thread%3A1",
    );
    expect(derive.providerSessionForThread({ providerInstanceId: "i", threadId: "t", nativeSessionId: "s%1" })).toBe(
      "provider-session:provider-instance:i:thread:t:native-session:s%251",
    );
    expect(derive.providerSessionForThread({ providerInstanceId: "i", threadId: "t", nativeThreadId: "n:1" })).toBe(
      "provider-session:provider-instance:i:thread:t:native-thread:n%3A1",
    );
    expect(() =>
      derive.providerSessionForThread({ providerInstanceId: "i", threadId: "t", nativeSessionId: "s", nativeThreadId: "n" }),
    ).toThrow(/not both/);
  });

  it("providerThread and providerTurn", () => {
    expect(derive.providerThread({ driver: "claude", nativeThreadId: "n" })).toBe("provider-thread:provider:claude:native-thread:n");
    expect(
      derive.providerThread({ driver: "claude", providerInstanceId: "i:1", threadId: "thread:2", nativeThreadId: "n%" }),
    ).toBe("provider-thread:provider:claude:provider-instance:i%3A1:thread:thread%3A2:native-thread:n%25");
    expect(derive.providerThread({ driver: "claude", threadId: "t", nativeThreadId: "n" })).toBe(
      "provider-thread:provider:claude:thread:t:native-thread:n",
    );
    expect(derive.providerTurn({ providerThreadId: "provider-thread:provider:c:native-thread:n", nativeTurnId: "7" })).toBe(
      "provider-turn:provider-thread:provider-thread%3Aprovider%3Ac%3Anative-thread%3An:native-turn:7",
    );
  });

  it("nodeFromProviderItem and subagentFromProviderTask", () => {
    expect(derive.nodeFromProviderItem({ driver: "codex", nativeItemId: "item:1" })).toBe("node:provider:codex:native-item:item%3A1");
    expect(derive.nodeFromProviderItem({ driver: "codex", providerTurnId: "pt", nativeItemId: "i" })).toBe(
      "node:provider:codex:provider-turn:pt:native-item:i",
    );
    expect(derive.subagentFromProviderTask({ driver: "claude", nativeTaskId: "task%1" })).toBe(
      "subagent:provider:claude:native-task:task%251",
    );
    expect(derive.subagentFromProviderTask({ driver: "claude", threadId: "thread:1", nativeTaskId: "k" })).toBe(
      "subagent:provider:claude:thread:thread%3A1:native-task:k",
    );
  });

  it("turnItemFromProviderItem and messageFromProviderItem", () => {
    expect(derive.turnItemFromProviderItem({ driver: "codex", nativeItemId: "i" })).toBe("turn-item:provider:codex:native-item:i");
    expect(derive.turnItemFromProviderItem({ driver: "codex", providerTurnId: "p:t", nativeItemId: "i", segment: "2" })).toBe(
      "turn-item:provider:codex:provider-turn:p%3At:native-item:i:segment:2",
    );
    expect(derive.messageFromProviderItem({ driver: "codex", nativeItemId: "i%", segment: "a:b" })).toBe(
      "message:provider:codex:native-item:i%25:segment:a%3Ab",
    );
  });

  it("client request derivations", () => {
    expect(derive.commandFromClientRequest({ scope: "provider-session:x", tool: "delegate_task", clientRequestId: "r%1" })).toBe(
      "command:client-request:provider-session%3Ax:tool:delegate_task:request:r%251",
    );
    expect(derive.threadFromClientRequest({ scope: "s", clientRequestId: "r:1", index: 0 })).toBe(
      "thread:client-request:s:request:r%3A1:index:0",
    );
    expect(derive.messageFromClientRequest({ scope: "s", clientRequestId: "r" })).toBe("message:client-request:s:request:r");
  });
});

/** How each input field of a derive function varies in the tests below. */
type FieldKind = "segment" | "optional" | "ordinal";

interface DeriveCase {
  readonly name: keyof typeof derive;
  readonly fields: Readonly<Record<string, FieldKind>>;
  /** Two optional fields that may not both be present. */
  readonly exclusive?: readonly [string, string];
}

const cases: readonly DeriveCase[] = [
  { name: "threadFromProviderThread", fields: { driver: "segment", providerInstanceId: "optional", nativeThreadId: "segment" } },
  { name: "runFromThreadOrdinal", fields: { threadId: "segment", ordinal: "ordinal" } },
  { name: "runAttemptFromOrdinal", fields: { runId: "segment", attemptOrdinal: "ordinal" } },
  { name: "providerSessionShared", fields: { providerInstanceId: "segment" } },
  {
    name: "providerSessionForThread",
    fields: { providerInstanceId: "segment", threadId: "segment", nativeSessionId: "optional", nativeThreadId: "optional" },
    exclusive: ["nativeSessionId", "nativeThreadId"],
  },
  {
    name: "providerThread",
    fields: { driver: "segment", providerInstanceId: "optional", threadId: "optional", nativeThreadId: "segment" },
  },
  { name: "providerTurn", fields: { providerThreadId: "segment", nativeTurnId: "segment" } },
  { name: "nodeFromProviderItem", fields: { driver: "segment", providerTurnId: "optional", nativeItemId: "segment" } },
  { name: "subagentFromProviderTask", fields: { driver: "segment", threadId: "optional", nativeTaskId: "segment" } },
  {
    name: "turnItemFromProviderItem",
    fields: { driver: "segment", providerTurnId: "optional", nativeItemId: "segment", segment: "optional" },
  },
  {
    name: "messageFromProviderItem",
    fields: { driver: "segment", providerTurnId: "optional", nativeItemId: "segment", segment: "optional" },
  },
  { name: "commandFromClientRequest", fields: { scope: "segment", tool: "segment", clientRequestId: "segment" } },
  { name: "threadFromClientRequest", fields: { scope: "segment", clientRequestId: "segment", index: "ordinal" } },
  { name: "messageFromClientRequest", fields: { scope: "segment", clientRequestId: "segment" } },
  { name: "outputStreamOfItem", fields: { turnItemId: "segment" } },
];

type Input = Record<string, string | number | undefined>;

function run(c: DeriveCase, input: Input): string {
  return (derive[c.name] as (input: Input) => string)(input);
}

function allowed(c: DeriveCase, input: Input): boolean {
  return c.exclusive === undefined || input[c.exclusive[0]] === undefined || input[c.exclusive[1]] === undefined;
}

/** Canonical form of an input tuple: absent (undefined) optional segments drop out. */
function inputKey(name: string, input: Input): string {
  const entries = Object.entries(input)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([name, entries]);
}

/** Equal keys must give equal ids, and distinct keys distinct ids. */
function expectInjective(batch: readonly { key: string; id: string }[]): void {
  const idByKey = new Map<string, string>();
  const keyById = new Map<string, string>();
  for (const { key, id } of batch) {
    expect(idByKey.get(key) ?? id).toBe(id);
    expect(keyById.get(id) ?? key).toBe(key);
    idByKey.set(key, id);
    keyById.set(id, key);
  }
}

/**
 * Random segments built from tokens heavy in ":" and "%" (including the
 * literal encodings "%3A" and "%25"), with the empty string common, so
 * exact repeats and near-collisions both come up within one batch.
 */
const segment = fc
  .array(fc.constantFrom(":", "%", "%3A", "%25", "a"), { maxLength: 3 })
  .map((tokens) => tokens.join(""));
const arbitraryFor: Record<FieldKind, fc.Arbitrary<string | number | undefined>> = {
  segment,
  optional: fc.option(segment, { nil: undefined }),
  ordinal: fc.integer({ min: 0, max: 12 }),
};

function arbitraryInput(c: DeriveCase): fc.Arbitrary<Input> {
  const model = Object.fromEntries(Object.entries(c.fields).map(([field, kind]) => [field, arbitraryFor[kind]]));
  return fc.record(model).filter((input) => allowed(c, input));
}

/** A small exhaustive domain: every field takes every value, so equal values across fields always meet. */
const domainFor: Record<FieldKind, readonly (string | number | undefined)[]> = {
  segment: ["", ":", "%", "%3A", "a"],
  optional: [undefined, "", ":", "%3A", "a"],
  ordinal: [0, 1, 10],
};

function enumerateInputs(c: DeriveCase): Input[] {
  let inputs: Input[] = [{}];
  for (const [field, kind] of Object.entries(c.fields)) {
    inputs = inputs.flatMap((input) => domainFor[kind].map((value) => ({ ...input, [field]: value })));
  }
  return inputs.filter((input) => allowed(c, input));
}

describe("derive properties", () => {
  it("covers every derive function", () => {
    expect(cases.map((c) => c.name).sort()).toEqual(Object.keys(derive).sort());
  });

  for (const c of cases) {
    it(`${c.name} is deterministic and injective on random batches`, () => {
      fc.assert(
        fc.property(fc.array(arbitraryInput(c), { minLength: 2, maxLength: 60 }), (inputs) => {
          for (const input of inputs) expect(run(c, { ...input })).toBe(run(c, input));
          expectInjective(inputs.map((input) => ({ key: inputKey(c.name, input), id: run(c, input) })));
        }),
        { numRuns: 300 },
      );
    });
  }

  it("is injective within and across functions on an exhaustive small domain, and apart from allocated ids", () => {
    const batch = cases.flatMap((c) => enumerateInputs(c).map((input) => ({ key: inputKey(c.name, input), id: run(c, input) })));
    expect(batch.length).toBe(2765);
    const allocate = makeAllocate(() => "00000000-0000-4000-8000-000000000000");
    const allocated = ENTITY_KINDS.map((kind) => ({ key: `allocate:${kind}`, id: allocate[kind]() }));
    expectInjective([...batch, ...allocated]);
  });

  it("ids from different functions never collide on random inputs", () => {
    const tagged = fc.oneof(
      ...cases.map((c) => arbitraryInput(c).map((input) => ({ key: inputKey(c.name, input), id: run(c, input) }))),
      fc.tuple(fc.constantFrom(...ENTITY_KINDS), fc.uuid()).map(([kind, uuid]) => ({
        key: `allocate:${kind}:${uuid}`,
        id: `${EntityPrefix[kind]}:${uuid}`,
      })),
    );
    fc.assert(
      fc.property(fc.array(tagged, { minLength: 2, maxLength: 80 }), (batch) => expectInjective(batch)),
      { numRuns: 300 },
    );
  });

  it("splitting an id on ':' and decoding recovers every segment", () => {
    fc.assert(
      fc.property(segment, segment, fc.option(segment, { nil: undefined }), (driver, nativeItemId, providerTurnId) => {
        const id = derive.nodeFromProviderItem({ driver, providerTurnId, nativeItemId });
        const decoded = id.split(":").map(decodeURIComponent);
        const expected = ["node", "provider", driver];
        if (providerTurnId !== undefined) expected.push("provider-turn", providerTurnId);
        expected.push("native-item", nativeItemId);
        expect(decoded).toEqual(expected);
      }),
    );
  });
});
