import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { spanIdOf, stepSpanId, traceIdOfRoot } from "./spanIds.js";

const sha256 = (input: string) => createHash("sha256").update(input).digest("hex");

describe("span and trace ids", () => {
  it("are the documented sha256 prefixes of the Loom id, the same on every call", () => {
    expect(spanIdOf("run:1")).toBe(sha256("loom:span:run:1").slice(0, 16));
    expect(traceIdOfRoot("thread:root")).toBe(sha256("loom:trace:thread:root").slice(0, 32));
    expect(stepSpanId("workflow:w", "step-2")).toBe(sha256("loom:span:workflow:w/step-2").slice(0, 16));
    // Remembered ids answer what was hashed the first time.
    expect(spanIdOf("run:1")).toBe(sha256("loom:span:run:1").slice(0, 16));
  });

  it("keep a trace id and a span id of the same Loom id apart", () => {
    const asTrace = traceIdOfRoot("thread:same");
    const asSpan = spanIdOf("thread:same");
    expect(asTrace).toHaveLength(32);
    expect(asSpan).toHaveLength(16);
    expect(asTrace.startsWith(asSpan)).toBe(false);
    expect(traceIdOfRoot("thread:same")).toBe(asTrace);
    expect(spanIdOf("thread:same")).toBe(asSpan);
  });

  it("stay correct past the remembered ids' bound, when the table is forgotten", () => {
    const first = spanIdOf("run:first");
    for (let i = 0; i < 9_000; i++) spanIdOf(`run:filler-${i}`);
    expect(spanIdOf("run:first")).toBe(first);
    expect(spanIdOf("run:filler-8999")).toBe(sha256("loom:span:run:filler-8999").slice(0, 16));
  });
});
