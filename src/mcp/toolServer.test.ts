import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpCapability } from "./credentialRegistry.js";
import { AppError } from "../app/errors.js";
import { type McpHarness, OWNER_TOKEN, startMcpHarness } from "./testSuiteMcpHarness.js";
import { type McpToolContext, defineTool, defineToolkit } from "./toolkit.js";
import { McpToolCatalogError, buildToolCatalog } from "./toolServer.js";
import { diagnosticsToolkit, loomEchoTool } from "./toolkits/diagnostics/tools.js";

/** Tool calls through the real endpoint and the SDK client: listing, validation, failures, progress. */

const ran: { name: string; input: unknown; ctx: McpToolContext }[] = [];
const testToolkit = defineToolkit("test", [
  defineTool({
    name: "test_delegate",
    title: "Delegate",
    description: "An orchestration tool that records its input.",
    inputSchema: z.object({
      task: z.string().min(1),
      mode: z.enum(["async", "wait"]).default("async"),
      target: z.object({ model: z.string() }).optional(),
    }),
    outputSchema: z.object({ taskId: z.string(), mode: z.string(), scopeKind: z.string() }),
    capability: McpCapability.orchestration,
    handler: (input, ctx) => {
      ran.push({ name: "test_delegate", input, ctx });
      return Promise.resolve({ taskId: "task:1", mode: input.mode, scopeKind: ctx.scope.kind });
    },
  }),
  defineTool({
    name: "test_crash",
    description: "Throws a plain Error.",
    inputSchema: z.object({}),
    outputSchema: z.object({}),
    capability: McpCapability.preview,
    handler: () => Promise.reject(new Error("sqlite exploded at /var/secret/db.sqlite")),
  }),
  defineTool({
    name: "test_denied",
    description: "Throws an OrchestratorMcpError.",
    inputSchema: z.object({ threadId: z.string() }),
    outputSchema: z.object({}),
    capability: McpCapability.preview,
    handler: (input) => Promise.reject(new AppError("thread_not_found", `thread ${input.threadId} does not exist`, { details: { threadId: input.threadId } })),
  }),
  defineTool({
    name: "test_progress",
    description: "Reports progress three times.",
    inputSchema: z.object({ steps: z.number().int().positive() }),
    outputSchema: z.object({ done: z.number() }),
    capability: McpCapability.preview,
    handler: async (input, ctx) => {
      for (let step = 1; step <= input.steps; step += 1) await ctx.progress({ progress: step, total: input.steps, message: `step ${step}` });
      return { done: input.steps };
    },
  }),
]);

let h: McpHarness;
let client: Client;
beforeEach(async () => {
  ran.length = 0;
  h = await startMcpHarness([diagnosticsToolkit, testToolkit]);
  client = (await h.connect(OWNER_TOKEN)).client;
});
afterEach(async () => {
  await h.close();
});

describe("tools/list", () => {
  it("lists every tool with a JSON Schema object built from its zod schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["loom_echo", "test_delegate", "test_crash", "test_denied", "test_progress"]);
    const delegate = tools.find((tool) => tool.name === "test_delegate")!;
    expect(delegate.title).toBe("Delegate");
    expect(delegate.inputSchema).toMatchObject({
      type: "object",
      properties: {
        task: { type: "string", minLength: 1 },
        mode: { type: "string", enum: ["async", "wait"], default: "async" },
        target: { type: "object", properties: { model: { type: "string" } } },
      },
      required: ["task"],
    });
    expect(delegate.inputSchema).not.toHaveProperty("$schema");
    const echo = tools.find((tool) => tool.name === "loom_echo")!;
    expect(echo.annotations).toMatchObject({ readOnlyHint: true });
    expect(echo.inputSchema.properties).toEqual({ text: { type: "string", maxLength: 100_000, description: "Text to return" } });
  });

  it("refuses duplicate tool names and non-object schemas", () => {
    expect(() => buildToolCatalog([diagnosticsToolkit, defineToolkit("again", [loomEchoTool])])).toThrow(McpToolCatalogError);
    const weird = { ...loomEchoTool, name: "bad name!" };
    expect(() => buildToolCatalog([defineToolkit("bad", [weird])])).toThrow(/not \[A-Za-z0-9_.-\]/);
  });
});

describe("tools/call", () => {
  it("returns the handler result as structuredContent and JSON text, with parsed input", async () => {
    const result = await client.callTool({ name: "test_delegate", arguments: { task: "review the diff" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ taskId: "task:1", mode: "async", scopeKind: "owner" });
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify({ taskId: "task:1", mode: "async", scopeKind: "owner" }) }]);
    expect(ran[0]!.input).toEqual({ task: "review the diff", mode: "async" });
    expect(typeof ran[0]!.ctx.requestId).toBe("number");
  });

  it("invalid arguments are invalid_request naming the issues, and the handler never runs", async () => {
    const result = await client.callTool({ name: "test_delegate", arguments: { task: "", mode: "sometime", target: { model: 5 } } });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as { error: { code: string; message: string; retryable: boolean } }).error;
    expect(error.code).toBe("invalid_request");
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^invalid arguments for test_delegate: /);
    expect(error.message).toContain("task:");
    expect(error.message).toContain("mode:");
    expect(error.message).toContain("target.model:");
    expect(result.content).toEqual([{ type: "text", text: `invalid_request: ${error.message}` }]);
    expect(ran).toHaveLength(0);
  });

  it("an unknown tool is invalid_request", async () => {
    const result = await client.callTool({ name: "no_such_tool", arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error: { code: "invalid_request", message: 'unknown tool "no_such_tool"' } });
  });

  it("a tool needing orchestration is capability_denied for a preview-only credential", async () => {
    const preview = await h.connect(h.issue({}, { capabilities: ["preview"] }).token);
    const denied = await preview.client.callTool({ name: "test_delegate", arguments: { task: "x" } });
    expect(denied.isError).toBe(true);
    expect(denied.structuredContent).toMatchObject({ error: { code: "capability_denied", retryable: false } });
    expect(ran).toHaveLength(0);
    const echo = await preview.client.callTool({ name: "loom_echo", arguments: { text: "still fine" } });
    expect(echo.structuredContent).toEqual({ text: "still fine" });
  });

  it("a thread credential's scope reaches the handler", async () => {
    const thread = await h.connect(h.issue().token);
    const result = await thread.client.callTool({ name: "test_delegate", arguments: { task: "x" } });
    expect(result.structuredContent).toMatchObject({ scopeKind: "thread" });
    expect(ran[0]!.ctx.scope).toMatchObject({ kind: "thread", threadId: "thread:parent", providerSessionId: "provider-session:1" });
  });

  it("a plain Error becomes orchestration_error with a generic message; the log keeps the original", async () => {
    const result = await client.callTool({ name: "test_crash", arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: "orchestration_error", message: expect.stringContaining("internal orchestration error"), retryable: true },
    });
    const wire = JSON.stringify(result);
    expect(wire).not.toContain("sqlite exploded");
    expect(wire).not.toContain("/var/secret");
    expect(wire).not.toMatch(/\n\s+at /);
    expect(h.logs.join("\n")).toMatch(/test_crash.*failed: Error: sqlite exploded/);
  });

  it("an OrchestratorMcpError keeps its code, message and details", async () => {
    const result = await client.callTool({ name: "test_denied", arguments: { threadId: "thread:gone" } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      error: { code: "thread_not_found", message: "thread thread:gone does not exist", retryable: false, details: { threadId: "thread:gone" } },
    });
    expect(result.content).toEqual([{ type: "text", text: "thread_not_found: thread thread:gone does not exist" }]);
  });

  it("progress notifications reach the client's onprogress callback", async () => {
    const updates: unknown[] = [];
    const result = await client.callTool({ name: "test_progress", arguments: { steps: 3 } }, undefined, { onprogress: (update) => updates.push(update) });
    expect(result.structuredContent).toEqual({ done: 3 });
    expect(updates).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
  });

  it("without a progressToken, progress is a no-op that sends nothing", async () => {
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    const result = await client.callTool({ name: "test_progress", arguments: { steps: 2 } });
    expect(result.structuredContent).toEqual({ done: 2 });
    expect(errors).toEqual([]);
  });
});
