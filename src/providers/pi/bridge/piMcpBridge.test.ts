import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../../testkit/loomHarness.js";
import loomPiBridge from "./piMcpBridge.js";

/**
 * Loom's Pi extension against the real Loom MCP endpoint (official SDK
 * server, owner token), through a recording HTTP proxy so the test sees the
 * headers the bridge sends. Pi itself is replaced by a recorder of the
 * ExtensionAPI calls the bridge makes; pi.e2e.test.ts runs it inside Pi.
 */

interface RegisteredTool {
  name: string;
  parameters: unknown;
  execute: (id: string, params: unknown, signal: AbortSignal | undefined, onUpdate: ((update: { content: { text: string }[] }) => void) | undefined) => Promise<{ content: { text: string }[]; details: unknown }>;
}

let harness: LoomHarness;
let proxy: Server;
let proxyUrl: string;
const seen: { method: string; headers: Record<string, string | string[] | undefined> }[] = [];

beforeEach(async () => {
  harness = await LoomHarness.start();
  seen.length = 0;
  const target = new URL(harness.server.mcpUrl);
  proxy = createServer((req, res) => {
    seen.push({ method: req.method ?? "", headers: req.headers });
    const upstream = request({ host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 500, answer.headers);
      answer.pipe(res);
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});

afterEach(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await harness.close();
  delete process.env.T3_MCP_URL;
  delete process.env.T3_PI_APPROVAL;
  delete process.env.T3_PI_READ_ONLY;
});

const BUILT_IN = ["read", "bash", "edit", "write"];

/** Loads the extension against a recorder of the ExtensionAPI; like Pi, every registered tool starts active beside the built-in ones. */
async function load(env: Record<string, string>): Promise<{ tools: Map<string, RegisteredTool>; handlers: Map<string, (event: unknown, ctx: unknown) => unknown>; active: () => string[] }> {
  Object.assign(process.env, env);
  const tools = new Map<string, RegisteredTool>();
  const handlers = new Map<string, (event: unknown, ctx: unknown) => unknown>();
  let active: string[] | null = null;
  const current = (): string[] => active ?? [...BUILT_IN, ...tools.keys()];
  const api = {
    registerTool: (tool: RegisteredTool) => tools.set(tool.name, tool),
    on: (event: string, handler: (event: unknown, ctx: unknown) => unknown) => handlers.set(event, handler),
    getActiveTools: current,
    setActiveTools: (names: string[]) => (active = [...names]),
  };
  await loomPiBridge(api as unknown as ExtensionAPI);
  return { tools, handlers, active: current };
}

describe("Loom's Pi extension", () => {
  it("registers Loom's tools as mcp__t3-code__*, calls them over HTTP with the protocol version on follow-ups, and keeps the token out of Pi's environment", async () => {
    const { tools } = await load({ T3_MCP_URL: proxyUrl, T3_MCP_BEARER_TOKEN: harness.ownerToken });
    expect(process.env.T3_MCP_BEARER_TOKEN).toBeUndefined();
    expect([...tools.keys()]).toContain("mcp__t3-code__delegate_task");
    expect([...tools.keys()].every((name) => name.startsWith("mcp__t3-code__") || name.startsWith("mcp__t3_code__"))).toBe(true);
    expect(tools.get("mcp__t3-code__t3_thread_list")?.parameters).toMatchObject({ type: "object" });

    const result = await tools.get("mcp__t3-code__t3_thread_list")!.execute("c1", {}, undefined, undefined);
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ threads: [], total: 0 });
    expect(result.details).toMatchObject({ total: 0 });

    expect(seen[0]?.headers["mcp-protocol-version"]).toBeUndefined();
    expect(seen.length).toBeGreaterThan(2);
    for (const request of seen.slice(1)) {
      expect(request.headers["mcp-protocol-version"]).toBe("2025-06-18");
      expect(request.headers["mcp-session-id"]).toMatch(/\S/);
      expect(request.headers.authorization).toBe(`Bearer ${harness.ownerToken}`);
    }
  });

  it("each tool has a hidden mcp__t3_code__ alias: registered, calling the same tool, and out of the active tools from session start on", async () => {
    const { tools, handlers, active } = await load({ T3_MCP_URL: proxyUrl, T3_MCP_BEARER_TOKEN: harness.ownerToken });
    const publicNames = [...tools.keys()].filter((name) => name.startsWith("mcp__t3-code__"));
    const aliasNames = [...tools.keys()].filter((name) => name.startsWith("mcp__t3_code__"));
    expect(publicNames.length).toBeGreaterThan(3);
    expect(aliasNames.sort()).toEqual(publicNames.map((name) => name.replace("mcp__t3-code__", "mcp__t3_code__")).sort());
    const alias = await tools.get("mcp__t3_code__t3_thread_list")!.execute("c1", {}, undefined, undefined);
    expect(JSON.parse(alias.content[0]!.text)).toMatchObject({ threads: [], total: 0 });

    await handlers.get("session_start")!({ type: "session_start", reason: "startup" }, {});
    expect(active().sort()).toEqual([...BUILT_IN, ...publicNames].sort());
  });

  it("plan mode (T3_PI_READ_ONLY) leaves only the read-only built-ins and the public names active", async () => {
    process.env.T3_PI_READ_ONLY = "1";
    const { handlers, active } = await load({ T3_MCP_URL: proxyUrl, T3_MCP_BEARER_TOKEN: harness.ownerToken });
    await handlers.get("session_start")!({ type: "session_start", reason: "startup" }, {});
    expect(active().filter((name) => !name.startsWith("mcp__"))).toEqual(["read", "grep", "find", "ls"]);
    expect(active().some((name) => name.startsWith("mcp__t3_code__"))).toBe(false);
    expect(active()).toContain("mcp__t3-code__delegate_task");
  });

  it("a long wait reports Loom's progress, and Pi's abort signal ends the call", async () => {
    const busy = await harness.createThread({ title: "busy", prompt: script({ sleep: 60_000 }), target: { providerInstanceId: "scripted" } });
    await harness.waitForRun(busy.runId!, "running");
    const { tools } = await load({ T3_MCP_URL: proxyUrl, T3_MCP_BEARER_TOKEN: harness.ownerToken });
    const wait = tools.get("mcp__t3-code__t3_thread_wait")!;

    const updates: string[] = [];
    const done = await wait.execute("c1", { threadId: busy.threadId, timeoutMs: 600 }, undefined, (update) => updates.push(update.content[0]!.text));
    expect(JSON.parse(done.content[0]!.text)).toMatchObject({ waitTimedOut: true });
    expect(updates.length).toBeGreaterThan(0);

    const abort = new AbortController();
    let progressed: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (progressed = resolve));
    const call = wait.execute("c2", { threadId: busy.threadId, timeoutMs: 20_000 }, abort.signal, () => progressed());
    await first;
    abort.abort();
    await expect(call).rejects.toThrow(/abort/i);
    expect(harness.run(busy.runId!).status).toBe("running");
  });

  it("without a credential it registers nothing; gated tools ask through Pi's confirm dialog and a no blocks them", async () => {
    const { tools, handlers } = await load({ T3_PI_APPROVAL: "bash,edit" });
    expect(tools.size).toBe(0);
    const gate = handlers.get("tool_call")!;
    const asked: string[] = [];
    const ctx = (answer: boolean) => ({ ui: { confirm: (title: string) => (asked.push(title), Promise.resolve(answer)) } });
    expect(await gate({ toolName: "bash", input: { command: "rm -rf build" } }, ctx(false))).toEqual({ block: true, reason: "Declined through Loom" });
    expect(await gate({ toolName: "edit", input: { path: "a.ts" } }, ctx(true))).toBeUndefined();
    expect(await gate({ toolName: "read", input: { path: "a.ts" } }, ctx(false))).toBeUndefined();
    expect(asked).toEqual(["[loom:command] Run rm -rf build", "[loom:file-change] Edit a.ts"]);
  });
});
