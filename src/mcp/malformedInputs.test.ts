import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOL_CONTRACTS, type ToolName } from "../contracts/tools/toolContracts.js";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * Property: whatever malformed arguments a client sends to any tool of
 * TOOL_CONTRACTS over real MCP (wrong types, strings past their maximum,
 * NaN/Infinity-ish and out-of-range numbers, nested junk, prototype keys,
 * missing required fields, unknown keys, arguments that are not an object),
 * the answer is the typed invalid_request tool failure, and nothing is
 * written (orchestrator.state.lastSequence does not move).
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ diagnosticsTools: true });
});
afterAll(async () => {
  await h.close();
});

/** A valid input per tool: each case breaks exactly one thing about it. */
const VALID: { readonly [N in ToolName]: Record<string, unknown> } = {
  orchestrator_capabilities: {},
  create_threads: { threads: [{ title: "t" }] },
  t3_thread_launch: { message: "m" },
  t3_thread_list: {},
  t3_thread_read: { threadId: "thread:x" },
  t3_thread_update: { action: "rename", title: "x" },
  link_pull_request: { url: "https://example.com/pr/1" },
  unlink_pull_request: {},
  t3_thread_send: { threadId: "thread:x", message: "m" },
  t3_thread_wait: { threadId: "thread:x", timeoutMs: 0 },
  t3_thread_interrupt: { threadId: "thread:x" },
  delegate_task: { task: "t" },
  task_status: { taskId: "subagent:x" },
  task_cancel: { taskId: "subagent:x" },
  t3_pending_request_list: { threadId: "thread:x" },
  t3_pending_request_read: { threadId: "thread:x", requestId: "request:x" },
  t3_pending_request_respond: { threadId: "thread:x", requestId: "request:x", dismiss: true },
  t3_queue_list: { threadId: "thread:x" },
  t3_queue_read: { threadId: "thread:x", runId: "run:x" },
  t3_queue_edit: { threadId: "thread:x", runId: "run:x", message: "m" },
  t3_queue_cancel: { threadId: "thread:x", runId: "run:x" },
  t3_queue_reorder: { threadId: "thread:x", runIds: [] },
  t3_queue_promote_to_steer: { threadId: "thread:x", runId: "run:x" },
  t3_thread_organize: { threadId: "thread:x", action: "settle" },
  t3_thread_configuration: { threadId: "thread:x" },
  t3_thread_configure: { threadId: "thread:x", interactionMode: "plan" },
  t3_thread_fork: { threadId: "thread:x" },
  t3_thread_merge_back: { threadId: "thread:x" },
  t3_thread_transfers: { threadId: "thread:x" },
  t3_merge_queue: { threadId: "thread:x" },
  t3_thread_search: { query: "x" },
  t3_background_wait: { threadId: "thread:x" },
  request_secret: { secretName: "Token", envVarName: "SOME_TOKEN", description: "x" },
  schedule_task: { prompt: "audit", trigger: { type: "interval", everyMs: 3_600_000 } },
  list_scheduled_tasks: {},
  update_scheduled_task: { scheduledTaskId: "scheduled-task:none", enabled: false },
  delete_scheduled_task: { scheduledTaskId: "scheduled-task:none" },
  run_scheduled_task_now: { scheduledTaskId: "scheduled-task:none" },
  t3_workflow_start: { script: "return 1;" },
  t3_workflow_status: { workflowId: "workflow:none" },
  t3_workflow_stop: { workflowId: "workflow:none" },
  t3_budget_raise: { taskId: "subagent:none", limits: { tokens: 1000 } },
  loom_echo: { text: "hi" },
  loom_tools: { query: "thread" },
};

const TOOLS = Object.keys(TOOL_CONTRACTS) as ToolName[];

interface JsonSchema {
  readonly type?: string;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly maxLength?: number;
  readonly maximum?: number;
  readonly minimum?: number;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
}

const SCHEMAS = Object.fromEntries(TOOLS.map((tool) => [tool, z.toJSONSchema(TOOL_CONTRACTS[tool].input, { io: "input", unrepresentable: "any" }) as JsonSchema])) as Record<
  ToolName,
  JsonSchema
>;

/** Values of every JSON kind but `type`. */
function wrongTypeFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 20 }),
    number: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    boolean: fc.boolean(),
    object: fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    array: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
    null: fc.constant(null),
  };
  const own = schema.type === "integer" ? "number" : schema.type;
  if (schema.enum !== undefined) return fc.oneof(fc.string({ maxLength: 12 }).filter((s) => !schema.enum!.includes(s)), all.number!, all.object!);
  return fc.oneof(...Object.entries(all).flatMap(([kind, arb]) => (kind === own ? [] : [arb])));
}

/** Out-of-range or not-a-number values for a numeric field; JSON sends NaN and Infinity as null. */
function badNumber(schema: JsonSchema): fc.Arbitrary<unknown> {
  const max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
  const min = schema.minimum ?? Number.MIN_SAFE_INTEGER;
  return fc.oneof(
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e308, -1e308, Number.MAX_VALUE, -Number.MAX_VALUE),
    fc.integer({ min: 1, max: 1_000_000 }).map((n) => max + n),
    fc.integer({ min: 1, max: 1_000_000 }).map((n) => min - n),
    ...(schema.type === "integer" ? [fc.double({ min: 0.01, max: 0.99, noNaN: true }).map((f) => Math.floor(max / 2) + f)] : []),
  );
}

/** An object with a prototype key as its own property, as JSON.parse makes it. */
function withPrototypeKey(base: Record<string, unknown>, key: "__proto__" | "constructor", value: unknown, nestedUnder: string | null): Record<string, unknown> {
  const junk = JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value ?? null)}}`) as Record<string, unknown>;
  if (nestedUnder === null) return { ...base, ...junk };
  return { ...base, [nestedUnder]: junk };
}

interface Case {
  readonly tool: ToolName;
  readonly kind: string;
  readonly args: unknown;
}

/** One malformed call of `tool`. */
function malformed(tool: ToolName): fc.Arbitrary<Case> {
  const schema = SCHEMAS[tool];
  const base = VALID[tool];
  const properties = Object.entries(schema.properties ?? {});
  const strings = properties.filter(([, s]) => s.type === "string" && s.maxLength !== undefined);
  const numbers = properties.filter(([, s]) => s.type === "number" || s.type === "integer");
  const required = schema.required ?? [];
  const options: fc.Arbitrary<Case>[] = [
    fc
      .oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }))
      .map((args) => ({ tool, kind: "not an object", args })),
    fc
      .tuple(fc.constantFrom("__proto__" as const, "constructor" as const), fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, ...properties.map(([name]) => name)))
      .map(([key, value, under]) => ({ tool, kind: `prototype key ${key}`, args: withPrototypeKey(base, key, value, under) })),
    fc
      .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }))
      .filter(([key]) => !(key in (schema.properties ?? {})) && key !== "__proto__" && key !== "constructor")
      .map(([key, value]) => ({ tool, kind: "unknown key", args: { ...base, [key]: value } })),
  ];
  if (properties.length > 0) {
    options.push(
      fc
        .constantFrom(...properties)
        .chain(([name, s]) => wrongTypeFor(s).map((value) => ({ tool, kind: `wrong type for ${name}`, args: { ...base, [name]: value } }))),
    );
    options.push(
      fc
        .constantFrom(...properties)
        .chain(([name]) =>
          fc.letrec<{ junk: unknown }>((tie) => ({ junk: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 1 }), fc.array(tie("junk"), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), tie("junk"), { maxKeys: 3 })) })).junk.map(
            (junk) => ({ tool, kind: `nested junk in ${name}`, args: { ...base, [name]: [[junk, { deeper: [junk] }]] } }),
          ),
        ),
    );
  }
  if (strings.length > 0) {
    options.push(
      fc
        .tuple(fc.constantFrom(...strings), fc.integer({ min: 1, max: 4_096 }))
        .map(([[name, s], extra]) => ({ tool, kind: `${name} past ${s.maxLength} chars`, args: { ...base, [name]: "x".repeat(s.maxLength! + extra) } })),
    );
  }
  if (numbers.length > 0) {
    options.push(fc.constantFrom(...numbers).chain(([name, s]) => badNumber(s).map((value) => ({ tool, kind: `bad number ${String(value)} for ${name}`, args: { ...base, [name]: value } }))));
  }
  if (required.length > 0) {
    options.push(
      fc.constantFrom(...required).map((name) => {
        const { [name]: _dropped, ...rest } = base;
        return { tool, kind: `missing ${name}`, args: rest };
      }),
    );
  }
  return fc.oneof(...options);
}

/** True when the case is malformed by the schema alone (prototype keys are refused at the JSON boundary instead). */
function locallyInvalid(c: Case): boolean {
  if (c.kind.startsWith("prototype key")) return true;
  const sent = JSON.parse(JSON.stringify(c.args) ?? "null") as unknown;
  if (typeof sent !== "object" || sent === null || Array.isArray(sent)) return true;
  return !TOOL_CONTRACTS[c.tool].input.safeParse(sent).success;
}

describe("malformed tool arguments over MCP", () => {
  it("every valid base input parses (each case breaks one thing)", () => {
    for (const tool of TOOLS) expect({ tool, ok: TOOL_CONTRACTS[tool].input.safeParse(VALID[tool]).success }).toEqual({ tool, ok: true });
  });

  it("non-object arguments get the typed invalid_request failure, not a JSON-RPC error", async () => {
    for (const args of [5, [], ["a"], "text", true, null]) {
      const outcome = await h.owner.call("create_threads", args as unknown as Record<string, unknown>);
      expect({ args, code: outcome.errorCode, message: outcome.errorMessage }).toEqual({ args, code: "invalid_request", message: expect.stringContaining("arguments must be a JSON object") });
    }
  });

  it("a __proto__ or constructor key is refused with invalid_request instead of being dropped", async () => {
    const before = h.state.threads.size;
    const args = JSON.parse('{"threads":[{"title":"proto","__proto__":{"runtimeMode":"full-access"}}]}') as Record<string, unknown>;
    const outcome = await h.owner.call("create_threads", args);
    expect(outcome).toMatchObject({ isError: true, errorCode: "invalid_request", errorMessage: expect.stringContaining("threads[0].__proto__") });
    const ctor = await h.owner.call("t3_thread_list", JSON.parse('{"constructor":{"name":"x"}}') as Record<string, unknown>);
    expect(ctor).toMatchObject({ isError: true, errorCode: "invalid_request" });
    expect(h.state.threads.size).toBe(before);
  });

  it("property: every malformed input of every tool is a typed invalid_request and writes nothing", async () => {
    const before = h.state.lastSequence;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TOOLS).chain((tool) => malformed(tool)),
        async (c) => {
          fc.pre(locallyInvalid(c));
          const outcome = await h.owner.call(c.tool, c.args as Record<string, unknown>);
          expect({ tool: c.tool, kind: c.kind, isError: outcome.isError, code: outcome.errorCode }).toEqual({ tool: c.tool, kind: c.kind, isError: true, code: "invalid_request" });
          expect(outcome.errorMessage).not.toMatch(/\n\s+at /);
          expect(h.state.lastSequence).toBe(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
