import { describe, expect, it } from "vitest";
import { type AgentCall, runWorkflowScript } from "./sandbox.js";

/**
 * The workflow sandbox on the real QuickJS WebAssembly interpreter. The host
 * here answers agent() calls directly: these tests are about the script
 * language, its limits and its call keys, not about delegation.
 */

function recordingHost(answer: (call: AgentCall) => unknown, delays: (call: AgentCall) => number = () => 0) {
  const calls: AgentCall[] = [];
  return {
    calls,
    host: {
      agent: async (call: AgentCall) => {
        calls.push(call);
        const ms = delays(call);
        if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
        return answer(call);
      },
    },
  };
}

const REVIEW = `
export const meta = { name: "review", description: "review then verify", phases: [{ title: "Review" }, { title: "Verify" }] };
phase("Review");
const reviews = await pipeline(args.files, (file) => agent("review " + file, { label: file, schema: { type: "object" } }));
phase("Verify");
const checks = await parallel(reviews.map((review) => () => agent("verify " + review.file, { phase: "Verify" })));
return { reviews, checks };
`;

describe("workflow sandbox", () => {
  it("runs a Claude-Code-style script: meta, phases, pipeline, parallel, args, return", async () => {
    const { host, calls } = recordingHost((call) => (call.prompt.startsWith("review") ? { file: call.prompt.slice(7), ok: true } : "verified"));
    const outcome = await runWorkflowScript(REVIEW, { files: ["a.ts", "b.ts"] }, host);
    expect(outcome).toEqual({
      ok: true,
      meta: { name: "review", description: "review then verify", phases: [{ title: "Review" }, { title: "Verify" }] },
      result: { reviews: [{ file: "a.ts", ok: true }, { file: "b.ts", ok: true }], checks: ["verified", "verified"] },
    });
    expect(calls.map((call) => [call.prompt, call.phase, call.ordinal])).toEqual([
      ["review a.ts", "Review", 0],
      ["review b.ts", "Review", 0],
      ["verify a.ts", "Verify", 0],
      ["verify b.ts", "Verify", 0],
    ]);
    expect(calls[0]!.options).toEqual({ label: "a.ts", schema: { type: "object" } });
  });

  it("keys calls by prompt, options and ordinal, independent of the order answers arrive", async () => {
    const script = `return await parallel([1, 2, 3].map((n) => () => agent("same", {})));`;
    const first = recordingHost((call) => call.ordinal, (call) => [30, 10, 0][call.ordinal]!);
    const second = recordingHost((call) => call.ordinal, (call) => [0, 10, 30][call.ordinal]!);
    const a = await runWorkflowScript(script, null, first.host);
    const b = await runWorkflowScript(script, null, second.host);
    expect(a).toMatchObject({ ok: true, result: [0, 1, 2] });
    expect(b).toEqual(a);
  });

  it("turns a rejected agent() into an exception the script can catch", async () => {
    const { host } = recordingHost(() => {
      throw Object.assign(new Error("the tokens budget ran out"), { name: "budget_exceeded" });
    });
    const outcome = await runWorkflowScript(`try { await agent("x"); } catch (e) { return e.name + ": " + e.message; }`, null, host);
    expect(outcome).toMatchObject({ ok: true, result: "budget_exceeded: the tokens budget ran out" });
  });

  it.each([
    ["Date.now()", "clock (Date)"],
    ["new Date()", "clock (Date)"],
    ["Math.random()", "randomness (Math.random)"],
    ["fetch('http://example.com')", "network access (fetch)"],
    ["require('fs')", "file system or process access (require)"],
    ["process.env", "file system or process access (process)"],
    ["setTimeout(() => 0, 1)", "timers (setTimeout)"],
  ])("refuses %s with a clear error", async (expression, what) => {
    const outcome = await runWorkflowScript(`return ${expression};`, null, recordingHost(() => null).host);
    expect(outcome).toMatchObject({ ok: false, error: `Error: workflow scripts have no ${what}: they must replay deterministically (docs/workflows.md)` });
  });

  it("stops an infinite loop at the step limit", async () => {
    const outcome = await runWorkflowScript("for (;;) {}", null, recordingHost(() => null).host, { maxSteps: 1_000, memoryBytes: 16 * 1024 * 1024, stackBytes: 512 * 1024 });
    expect(outcome).toMatchObject({ ok: false, error: "the workflow script exceeded its step limit" });
  });

  it("stops a script that allocates past its memory limit", async () => {
    const outcome = await runWorkflowScript("const a = new Array(50000000).fill(1); return a.length;", null, recordingHost(() => null).host, {
      maxSteps: 10_000_000,
      memoryBytes: 8 * 1024 * 1024,
      stackBytes: 512 * 1024,
    });
    expect(outcome.ok).toBe(false);
    expect((outcome as { error: string }).error).toMatch(/memory limit|out of memory/);
  });

  it("reports a syntax error and a script that waits on nothing", async () => {
    expect(await runWorkflowScript("return (", null, recordingHost(() => null).host)).toMatchObject({ ok: false, error: expect.stringContaining("SyntaxError") });
    expect(await runWorkflowScript("await new Promise(() => {});", null, recordingHost(() => null).host)).toMatchObject({
      ok: false,
      error: "the workflow script awaits a promise that can never settle",
    });
  });
});
