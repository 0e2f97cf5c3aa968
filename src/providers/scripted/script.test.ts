import { describe, expect, it } from "vitest";
import { parseTurnInput, resolveStep } from "./script.js";
import type { ScriptStep } from "./script.js";

const script = (steps: unknown[]): string => JSON.stringify({ script: steps });

describe("parseTurnInput", () => {
  it("parses emit steps with their defaults, and names what is wrong with a bad one", () => {
    const plan = parseTurnInput(
      script([
        { emit: { kind: "proposed_plan", steps: [{ text: "Read", status: "completed" }] } },
        { emit: { kind: "file_search", query: "TODO", matches: [{ path: "a.ts", line: 3 }] } },
        { emit: { kind: "web_search", query: "zod", results: [{ title: "Zod", url: "https://zod.dev" }] } },
        { emit: { kind: "compaction", tokensBefore: 100 } },
      ]),
    );
    expect(plan).toEqual({
      kind: "script",
      steps: [
        { kind: "emit", item: { kind: "proposed_plan", title: null, markdown: "", steps: [{ text: "Read", status: "completed" }] } },
        { kind: "emit", item: { kind: "file_search", query: "TODO", matches: [{ path: "a.ts", line: 3, preview: null }], truncated: false } },
        { kind: "emit", item: { kind: "web_search", query: "zod", action: "search", results: [{ title: "Zod", url: "https://zod.dev", snippet: null }] } },
        { kind: "emit", item: { kind: "compaction", trigger: "auto", tokensBefore: 100, tokensAfter: null, summary: null } },
      ],
    });
    expect(parseTurnInput(script([{ emit: { kind: "reasoning", text: "x" } }]))).toEqual({
      kind: "invalid",
      message: "invalid script: script[0]: emit.kind: must be an object whose kind is proposed_plan, file_search, web_search or compaction",
    });
    expect(parseTurnInput(script([{ emit: { kind: "web_search", query: "", results: [] } }]))).toEqual({ kind: "invalid", message: "invalid script: script[0]: emit.query: must not be empty" });
  });

  it("anything that is not a {script} object is an echo", () => {
    expect(parseTurnInput("hello")).toEqual({ kind: "echo", text: "hello" });
    expect(parseTurnInput('{"other": 1}')).toEqual({ kind: "echo", text: '{"other": 1}' });
    expect(parseTurnInput('{"script": [')).toEqual({ kind: "echo", text: '{"script": [' });
    expect(parseTurnInput("[1,2]")).toEqual({ kind: "echo", text: "[1,2]" });
    expect(parseTurnInput("")).toEqual({ kind: "echo", text: "" });
  });

  it("parses every step kind with its defaults", () => {
    const plan = parseTurnInput(
      script([
        { say: "hi" },
        { call: "t3_thread_list", args: { limit: 2 }, as: "list" },
        { call: "orchestrator_capabilities" },
        { sleep: 5 },
        { ask: "which?" },
        { approve: { kind: "command", detail: "rm -rf build" } },
        { approve: { kind: "file-change", detail: "", title: "Edit" } },
        { write: { path: "a/b.txt", content: "x\n" } },
        { run: "ls" },
        { fail: "boom" },
      ]),
    );
    const expected: ScriptStep[] = [
      { kind: "say", text: "hi" },
      { kind: "call", tool: "t3_thread_list", args: { limit: 2 }, as: "list" },
      { kind: "call", tool: "orchestrator_capabilities", args: {}, as: null },
      { kind: "sleep", ms: 5 },
      { kind: "ask", question: "which?", async: false },
      { kind: "approve", requestKind: "command", detail: "rm -rf build", title: null },
      { kind: "approve", requestKind: "file-change", detail: "", title: "Edit" },
      { kind: "write", path: "a/b.txt", content: "x\n" },
      { kind: "run", command: "ls" },
      { kind: "fail", message: "boom" },
    ];
    expect(plan).toEqual({ kind: "script", steps: expected });
  });

  it("parses a background step with its defaults, and names what is wrong with a bad one", () => {
    expect(parseTurnInput(script([{ background: "npm run dev" }, { background: "npm test", kind: "background_task", awaited: true }]))).toEqual({
      kind: "script",
      steps: [
        { kind: "background", command: "npm run dev", taskKind: "command", awaited: false },
        { kind: "background", command: "npm test", taskKind: "background_task", awaited: true },
      ],
    });
    expect(parseTurnInput(script([{ background: "x", kind: "daemon" }]))).toEqual({
      kind: "invalid",
      message: "invalid script: script[0]: kind: must be one of background_task, command, monitor, subagent",
    });
    expect(parseTurnInput(script([{ background: "" }]))).toEqual({ kind: "invalid", message: "invalid script: script[0]: background: must not be empty" });
  });

  it("accepts surrounding whitespace and an empty script", () => {
    expect(parseTurnInput(`  ${script([])}\n`)).toEqual({ kind: "script", steps: [] });
  });

  it.each([
    [script([{ say: "ok" }, { shout: "x" }]), "script[1]: unknown step (keys: shout)"],
    [script([{ say: 1 }]), "script[0]: say: must be a string"],
    [script([{ sleep: -1 }]), "script[0]: sleep: must not be negative"],
    [script([{ sleep: "10" }]), "script[0]: sleep: must be a number of milliseconds"],
    [script([{ call: "x", args: [1] }]), "script[0]: args: must be an object"],
    [script([{ call: "x", as: "a.b" }]), "script[0]: as: must be a variable name"],
    [script([{ say: "x", extra: 1 }]), 'script[0]: say: Unrecognized key: "extra"'],
    [script([{ approve: { kind: "command", detail: "", extra: 1 } }]), 'script[0]: approve: Unrecognized key: "extra"'],
    [script([{ approve: "rm" }]), "script[0]: approve: must be an object { kind, detail }"],
    [script([{ ask: "" }]), "script[0]: ask: must not be empty"],
    [script([{ say: "x", run: "ls" }]), "script[0]: a step has exactly one kind, this one has say and run"],
    [script([{ approve: { kind: "nuke", detail: "" } }]), "script[0]: approve.kind: must be one of command"],
    [script([{ write: { path: "a" } }]), "script[0]: write.content: must be a string"],
    [script(["say"]), "script[0]: a step must be an object"],
    ['{"script": {"say": "x"}}', "`script` must be an array of steps"],
    ['{"script": [], "scirpt": 1}', "unexpected key scirpt next to `script`"],
  ])("a malformed script is invalid with a message naming the step: %s", (input, message) => {
    const plan = parseTurnInput(input);
    expect(plan.kind).toBe("invalid");
    expect(plan.kind === "invalid" ? plan.message : "").toContain(message);
    expect(plan.kind === "invalid" ? plan.message : "").toMatch(/^invalid script: /);
  });
});

describe("resolveStep", () => {
  const vars = new Map<string, unknown>([
    ["result", { x: 42, ids: ["thread:1"] }],
    ["answer", "blue"],
  ]);

  it("renders text fields and keeps raw values in call args", () => {
    expect(resolveStep({ kind: "say", text: "x={{result.x}} a={{answer}}" }, vars)).toEqual({ kind: "say", text: "x=42 a=blue" });
    expect(
      resolveStep({ kind: "call", tool: "t3_{{answer}}", args: { ids: "{{result.ids}}", note: "{{result.x}}!" }, as: "r" }, vars),
    ).toEqual({ kind: "call", tool: "t3_blue", args: { ids: ["thread:1"], note: "42!" }, as: "r" });
    expect(resolveStep({ kind: "write", path: "{{answer}}.txt", content: "{{result}}" }, vars)).toEqual({
      kind: "write",
      path: "blue.txt",
      content: '{"x":42,"ids":["thread:1"]}',
    });
    expect(resolveStep({ kind: "approve", requestKind: "command", detail: "{{answer}}", title: null }, vars)).toMatchObject({
      detail: "blue",
      title: null,
    });
  });

  it("throws for an unknown variable", () => {
    expect(() => resolveStep({ kind: "run", command: "echo {{nope}}" }, vars)).toThrow('unknown variable "nope"');
  });
});
