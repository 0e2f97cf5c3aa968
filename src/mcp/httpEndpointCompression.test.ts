import { type IncomingMessage, request } from "node:http";
import { brotliDecompressSync, createBrotliDecompress, gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpCapability } from "./credentialRegistry.js";
import { LATEST_TEST_PROTOCOL, type McpHarness, OWNER_TOKEN, startMcpHarness } from "./testSuiteMcpHarness.js";
import { defineTool, defineToolkit } from "./toolkit.js";

/**
 * MCP answers, which the SDK's transport writes, compressed by the request's
 * Accept-Encoding over real HTTP: JSON-RPC results round-trip in br and gzip,
 * identity without the header, and a streamed answer's events arrive as they
 * are written, not at the end.
 */

const BIG_TEXT = Array.from({ length: 300 }, (_, i) => `line ${i} of a long tool result`).join("\n");
let release: () => void = () => undefined;
const toolkit = defineToolkit("test-compression", [
  defineTool({
    name: "test_big",
    description: "Answers a long text.",
    inputSchema: z.object({}),
    outputSchema: z.object({ text: z.string() }),
    capability: McpCapability.preview,
    handler: () => Promise.resolve({ text: BIG_TEXT }),
  }),
  defineTool({
    name: "test_hold",
    description: "Reports progress, then answers once released.",
    inputSchema: z.object({}),
    outputSchema: z.object({ released: z.boolean() }),
    capability: McpCapability.preview,
    handler: async (_input, ctx) => {
      await ctx.progress({ progress: 1, total: 2, message: "held" });
      await new Promise<void>((resolve) => (release = resolve));
      return { released: true };
    },
  }),
]);

let h: McpHarness;
let sessionId: string;
beforeEach(async () => {
  h = await startMcpHarness([toolkit]);
  sessionId = await h.rawInitialize(OWNER_TOKEN);
});
afterEach(async () => {
  release();
  await h.close();
});

/** POST a tools/call in the session, raw: the answer's headers and its undecoded body as a stream. */
function callTool(name: string, acceptEncoding: string | null, id: number, progressToken?: string): Promise<IncomingMessage> {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {}, ...(progressToken === undefined ? {} : { _meta: { progressToken } }) } });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${OWNER_TOKEN}`,
    "mcp-session-id": sessionId,
    "mcp-protocol-version": LATEST_TEST_PROTOCOL,
    ...(acceptEncoding === null ? {} : { "accept-encoding": acceptEncoding }),
  };
  return new Promise((resolve, reject) => {
    const req = request(h.mcpUrl, { method: "POST", headers }, resolve);
    req.on("error", reject);
    req.end(body);
  });
}

async function bytesOf(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The JSON-RPC messages of an answer's decoded text, JSON or an SSE stream. */
function messagesOf(text: string, contentType: string | undefined): Record<string, unknown>[] {
  if (!(contentType ?? "").includes("text/event-stream")) return [JSON.parse(text) as Record<string, unknown>];
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > "data: ".length)
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
}

describe("MCP answer compression", () => {
  it("a tool result round-trips in br and gzip, and comes as it is without Accept-Encoding", async () => {
    const decoders = { br: brotliDecompressSync, gzip: gunzipSync, identity: (bytes: Buffer) => bytes };
    for (const [accept, coding] of [["br", "br"], ["gzip, deflate", "gzip"], [null, "identity"]] as const) {
      const res = await callTool("test_big", accept, 10);
      const raw = await bytesOf(res);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-encoding"] ?? "identity", String(accept)).toBe(coding);
      expect(res.headers.vary).toBe("Accept-Encoding");
      if (coding !== "identity") expect(raw.length).toBeLessThan(BIG_TEXT.length / 3);
      const [answer] = messagesOf(decoders[coding](raw).toString("utf8"), res.headers["content-type"]);
      expect(answer).toMatchObject({ id: 10, result: { structuredContent: { text: BIG_TEXT } } });
    }
  });

  it("a streamed answer's progress arrives compressed while the call is still open", async () => {
    const res = await callTool("test_hold", "br", 11, "p-1");
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers["content-type"]).toContain("text/event-stream");
    const decoded = res.pipe(createBrotliDecompress());
    let text = "";
    let ended = false;
    res.on("end", () => (ended = true));
    const waiters: (() => void)[] = [];
    decoded.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      for (const wake of waiters.splice(0)) wake();
    });
    const seen = async (needle: string) => {
      while (!text.includes(needle)) await new Promise<void>((resolve) => waiters.push(resolve));
    };
    await seen('"notifications/progress"');
    expect(ended).toBe(false);
    expect(text).not.toContain('"released"');
    release();
    await seen('"released":true');
    const messages = messagesOf(text, "text/event-stream");
    expect(messages.map((message) => message.method ?? message.id)).toEqual(["notifications/progress", 11]);
  });

  it("the SDK client (fetch, gzip) lists and calls tools over compressed answers", async () => {
    const { client } = await h.connect(OWNER_TOKEN);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["test_big", "test_hold"]);
    expect((await client.callTool({ name: "test_big", arguments: {} })).structuredContent).toEqual({ text: BIG_TEXT });
  });
});
