import { describe, expect, it } from "vitest";
import { MAX_DRY_RUN_CALLS, scriptFanOut, standIn } from "./dryRun.js";

/**
 * Counting a workflow's agent() calls before it starts (docs/workflows.md,
 * "Dry run"): the real sandbox runs the script on stand-in answers, so the
 * library's patterns count as they would run, calls made together form one
 * round, and a loop that waits for an answer is cut off as not knowable.
 */

describe("scriptFanOut", () => {
  it("counts parallel calls as one round and a call after them as the next", async () => {
    const fanOut = await scriptFanOut(`const a = await parallel([1, 2, 3].map((i) => () => agent("p" + i, { target: { providerInstanceId: "x", model: "m" } }))); return agent("after", { role: "review" });`, null);
    expect(fanOut.unknowable).toBeNull();
    expect(fanOut.calls).toEqual([
      { providerInstanceId: "x", model: "m", role: null, round: 0 },
      { providerInstanceId: "x", model: "m", role: null, round: 0 },
      { providerInstanceId: "x", model: "m", role: null, round: 0 },
      { providerInstanceId: null, model: null, role: "review", round: 1 },
    ]);
  });

  it("runs the library on stand-ins that satisfy its schemas: bestOfN of 3 with 2 judges is 3 attempts, then 2 judges", async () => {
    const fanOut = await scriptFanOut(`return await bestOfN({ task: "write it", n: 3, judges: [{}, {}] });`, null);
    expect(fanOut.unknowable).toBeNull();
    expect(fanOut.calls.map((call) => call.round)).toEqual([0, 0, 0, 1, 1]);
  });

  it("reads args as the real run does", async () => {
    const fanOut = await scriptFanOut(`for (const item of args.items) await agent("do " + item); return null;`, { items: ["a", "b"] });
    expect(fanOut.calls.map((call) => call.round)).toEqual([0, 1]);
  });

  it("cuts a loop that ends on an answer off past the cap, as not knowable", async () => {
    const fanOut = await scriptFanOut(`for (;;) { const answer = await agent("again"); if (answer === "DONE") return answer; }`, null);
    expect(fanOut.calls).toHaveLength(MAX_DRY_RUN_CALLS);
    expect(fanOut.unknowable).toMatch(/more than 1000 agent\(\) calls/);
  });

  it("reports a script that fails on stand-ins, with the calls it made first", async () => {
    const fanOut = await scriptFanOut(`const text = await agent("give json"); return JSON.parse(text).value;`, null);
    expect(fanOut.calls).toHaveLength(1);
    expect(fanOut.unknowable).toMatch(/^the script failed on stand-in answers after 1 agent\(\) calls: /);
  });

  it("counts no call whose options the real call would refuse", async () => {
    const fanOut = await scriptFanOut(`try { await agent("x", { nonsense: true }); } catch (error) { return error.message; }`, null);
    expect(fanOut).toEqual({ calls: [], unknowable: null });
  });
});

describe("standIn", () => {
  it("is the smallest value the schema allows: required properties, minimum items, lengths and bounds, the first enum", () => {
    const schema = {
      type: "object",
      properties: { winner: { type: "integer", minimum: 2 }, scores: { type: "array", items: { type: "number" }, minItems: 2 }, note: { type: "string" }, tag: { enum: ["b", "c"] }, skip: { type: "string" } },
      required: ["winner", "scores", "note", "tag"],
    };
    expect(standIn(schema)).toEqual({ winner: 2, scores: [0, 0], note: "", tag: "b" });
    expect(standIn({ anyOf: [{ type: "boolean" }, { type: "string" }] })).toBe(false);
    expect(standIn({ type: "string", minLength: 3 })).toBe("xxx");
  });
});
