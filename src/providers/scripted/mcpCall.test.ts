import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { DynamicToolItem } from "../events.js";
import { openScriptedHarness } from "./sessionHarness.js";
import type { ScriptedHarness } from "./sessionHarness.js";

/**
 * The scripted agent against a real MCP server on 127.0.0.1: the official
 * SDK server behind a node:http handler that demands `Bearer good-token`.
 */

const GOOD_TOKEN = "good-token";
const script = (steps: unknown[]): string => JSON.stringify({ script: steps });

interface TestMcpServer {
  readonly url: string;
  readonly stats: { sessions: number; closed: number; unauthorized: number };
  close(): Promise<void>;
}

/** Resolves a test's wait once the `slow` tool has received its call. */
let slowCallStarted: () => void = () => undefined;

function buildMcpServer(): McpServer {
  const server = new McpServer({ name: "test-loom", version: "0.0.0" });
  server.registerTool("get_x", { inputSchema: { value: z.string() } }, ({ value }) => ({
    content: [{ type: "text", text: JSON.stringify({ x: value.toUpperCase() }) }],
    structuredContent: { x: value.toUpperCase() },
  }));
  server.registerTool("list_threads", { inputSchema: {} }, () => ({
    content: [{ type: "text", text: JSON.stringify({ threads: [{ id: "thread:one" }, { id: "thread:two" }] }) }],
  }));
  server.registerTool("echo_args", { inputSchema: { payload: z.unknown() } }, ({ payload }) => ({
    content: [{ type: "text", text: "echoed" }],
    structuredContent: { payload },
  }));
  server.registerTool("find_thread", { inputSchema: { id: z.string() } }, ({ id }) => ({
    isError: true,
    content: [{ type: "text", text: JSON.stringify({ code: "thread_not_found", message: `no thread ${id}` }) }],
  }));
  server.registerTool("slow", { inputSchema: {} }, async (_args, extra) => {
    slowCallStarted();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: "text", text: "slept" }] };
  });
  return server;
}

async function startTestMcpServer(): Promise<TestMcpServer> {
  const stats = { sessions: 0, closed: 0, unauthorized: 0 };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers.authorization !== `Bearer ${GOOD_TOKEN}`) {
      stats.unauthorized += 1;
      // Deliberately careless: echoes the credential, so the client's redaction is tested.
      res.writeHead(401, { "content-type": "text/plain" }).end(`bad credentials: ${req.headers.authorization ?? "none"}`);
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          stats.sessions += 1;
          transports.set(id, created);
        },
        onsessionclosed: (id) => {
          stats.closed += 1;
          transports.delete(id);
        },
      });
      await buildMcpServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stats,
    close: async () => {
      for (const transport of transports.values()) await transport.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let mcp: TestMcpServer;
let cwd: string;
let harness: ScriptedHarness;

beforeAll(async () => {
  mcp = await startTestMcpServer();
  cwd = await mkdtemp(join(tmpdir(), "loom-scripted-mcp-"));
});
afterAll(async () => {
  await mcp.close();
  await rm(cwd, { recursive: true, force: true });
});
beforeEach(async () => {
  mcp.stats.sessions = 0;
  mcp.stats.closed = 0;
  mcp.stats.unauthorized = 0;
  harness = await openScriptedHarness({ cwd, mcp: { url: mcp.url, token: GOOD_TOKEN } });
});
afterEach(async () => {
  await harness.session.stop();
});

function toolItems(runId: string): DynamicToolItem[] {
  return harness.items(runId).flatMap((item) => (item.kind === "dynamic_tool" ? [item] : []));
}
function texts(runId: string): string[] {
  return harness.items(runId).flatMap((item) => (item.kind === "assistant_message" ? [item.text] : []));
}

describe("scripted call steps over real MCP HTTP", () => {
  it("a tool result's structuredContent is templated into later steps", async () => {
    const end = await harness.run("run-1", script([{ call: "get_x", args: { value: "abc" }, as: "result" }, { say: "x is {{result.x}}" }]));
    expect(end.status).toBe("completed");
    expect(toolItems("run-1")).toEqual([
      {
        kind: "dynamic_tool",
        toolName: "get_x",
        arguments: { value: "abc" },
        result: expect.objectContaining({ structuredContent: { x: "ABC" } }),
        status: "completed",
      },
    ]);
    expect(texts("run-1")).toEqual(["x is ABC"]);
  });

  it("text-only JSON results are parsed, paths index arrays, and whole-string templates pass raw values", async () => {
    const end = await harness.run(
      "run-1",
      script([
        { call: "list_threads", as: "list" },
        { call: "get_x", args: { value: "{{list.threads.1.id}}" }, as: "second" },
        { call: "echo_args", args: { payload: "{{list.threads}}" }, as: "echo" },
        { say: "{{second.x}} / {{echo.payload.0.id}}" },
      ]),
    );
    expect(end.status).toBe("completed");
    expect(toolItems("run-1")[2]?.arguments).toEqual({ payload: [{ id: "thread:one" }, { id: "thread:two" }] });
    expect(texts("run-1")).toEqual(["THREAD:TWO / thread:one"]);
  });

  it("connects on a turn's first call, reuses the session within the turn, and ends it when the turn ends", async () => {
    const closedAtLeast = async (count: number): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (mcp.stats.closed < count) {
        if (Date.now() > deadline) throw new Error(`only ${mcp.stats.closed} MCP session(s) closed, expected ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await harness.run("run-1", "no tools here");
    expect(mcp.stats.sessions).toBe(0);
    await harness.run("run-2", script([{ call: "list_threads" }, { call: "get_x", args: { value: "a" } }]));
    expect(toolItems("run-2").map((item) => item.status)).toEqual(["completed", "completed"]);
    expect(mcp.stats.sessions).toBe(1);
    await closedAtLeast(1);
    await harness.run("run-3", script([{ call: "list_threads" }]));
    expect(toolItems("run-3").map((item) => item.status)).toEqual(["completed"]);
    expect(mcp.stats.sessions).toBe(2);
    await closedAtLeast(2);
    await harness.session.stop();
    expect(mcp.stats.closed).toBe(2);
  });

  it("an isError result is a failed item, is still stored, and the script goes on", async () => {
    const end = await harness.run(
      "run-1",
      script([{ call: "find_thread", args: { id: "thread:nope" }, as: "found" }, { say: "code={{found.code}}" }]),
    );
    expect(end.status).toBe("completed");
    expect(toolItems("run-1")).toMatchObject([{ toolName: "find_thread", status: "failed", result: { isError: true } }]);
    expect(texts("run-1")).toEqual(["code=thread_not_found"]);
  });

  it("a bad token yields a failed tool item with the error, never the token, and the turn completes", async () => {
    const intruder = await openScriptedHarness({ cwd, mcp: { url: mcp.url, token: "bad-token-123" } });
    const end = await intruder.run("run-1", script([{ call: "list_threads", as: "list" }, { say: "went on" }]));
    expect(end).toMatchObject({ status: "completed", error: null });
    const [item] = intruder.items("run-1");
    expect(item).toMatchObject({ kind: "dynamic_tool", toolName: "list_threads", status: "failed" });
    const message = JSON.stringify(item);
    expect(message).toContain("401");
    expect(message).toContain("[redacted]");
    expect(JSON.stringify(intruder.events)).not.toContain("bad-token-123");
    expect(intruder.items("run-1").at(-1)).toEqual({ kind: "assistant_message", text: "went on" });
    expect(mcp.stats.unauthorized).toBeGreaterThan(0);
    await intruder.session.stop();
  });

  it("an unreachable endpoint is a failed tool item too", async () => {
    const lost = await openScriptedHarness({ cwd, mcp: { url: "http://127.0.0.1:1/mcp", token: GOOD_TOKEN } });
    const end = await lost.run("run-1", script([{ call: "list_threads" }]));
    expect(end.status).toBe("completed");
    expect(lost.items("run-1")).toMatchObject([{ kind: "dynamic_tool", status: "failed", result: { error: expect.any(String) } }]);
    await lost.session.stop();
  });

  it("interrupting a call in flight ends the turn promptly", async () => {
    const inFlight = new Promise<void>((resolve) => (slowCallStarted = resolve));
    await harness.session.startTurn({ runId: "run-1", input: script([{ call: "slow" }, { say: "never" }]) });
    await inFlight;
    const started = performance.now();
    await harness.session.interruptTurn({ runId: "run-1" });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(harness.items("run-1")).toEqual([]);
    expect((await harness.turnEnd("run-1")).status).toBe("interrupted");
    // The client survives an aborted call.
    await harness.run("run-2", script([{ call: "get_x", args: { value: "ok" }, as: "r" }, { say: "{{r.x}}" }]));
    expect(texts("run-2")).toEqual(["OK"]);
  });
});
