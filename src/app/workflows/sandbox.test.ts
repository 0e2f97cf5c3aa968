import { describe, expect, it } from "vitest";
import { type AgentCall, NEXT_TURN, runWorkflowScript } from "./sandbox.js";

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

  it("ends a script whose parallel() rejected while other calls still run, and drops their late answers", async () => {
    const late: (() => void)[] = [];
    const host = {
      agent: (call: AgentCall) =>
        call.prompt === "fail"
          ? Promise.reject(Object.assign(new Error("the agent failed"), { code: "agent_failed" }))
          : new Promise((resolve) => late.push(() => resolve("late"))),
    };
    const outcome = await runWorkflowScript(`return await parallel([() => agent("slow"), () => agent("fail"), () => agent("slow too")]);`, null, host);
    expect(outcome).toMatchObject({ ok: false, error: "Error: the agent failed" });
    expect(late).toHaveLength(2);
    for (const answer of late) answer();
    // The answers land on an interpreter that is gone (their handlers run before the next turn of the event loop):
    // nothing is thrown, and the next script runs.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await runWorkflowScript(`return await agent("again");`, null, recordingHost(() => "ok").host)).toMatchObject({ ok: true, result: "ok" });
  });

  it("goes on with one branch as soon as its answer lands, while another call still runs", async () => {
    let release: () => void = () => undefined;
    // "fast" is answered at once: its answer lands while the sandbox lets the event loop turn, not while it sleeps.
    const { host, calls } = recordingHost((call) => call.prompt);
    let askedAfter: () => void = () => undefined;
    const afterAsked = new Promise<void>((resolve) => (askedAfter = resolve));
    const blocking = {
      agent: (call: AgentCall) => {
        if (call.prompt === "after fast") askedAfter();
        return call.prompt === "blocked" ? new Promise((resolve) => (release = () => resolve("blocked"))) : host.agent(call);
      },
    };
    const script = `return await parallel([() => agent("blocked"), async () => { const first = await agent("fast"); return agent("after " + first); }]);`;
    const running = runWorkflowScript(script, null, blocking);
    // "after fast" is asked for while "blocked" still waits: the script did not sleep until the next answer.
    await afterAsked;
    expect(calls.map((call) => call.prompt)).toEqual(["fast", "after fast"]);
    release();
    expect(await running).toMatchObject({ ok: true, result: ["blocked", "after fast"] });
  });

  it("takes its turns of the event loop through the turn it is given", async () => {
    let turns = 0;
    const counted = () => {
      turns += 1;
      return NEXT_TURN();
    };
    const outcome = await runWorkflowScript(`const a = await agent("a"); return [a, await agent("b")];`, null, recordingHost((call) => call.prompt).host, undefined, "", counted);
    expect(outcome).toMatchObject({ ok: true, result: ["a", "b"] });
    expect(turns).toBeGreaterThanOrEqual(3);
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
