/**
 * A one-tool MCP server over Streamable HTTP (stateless) for real-client tests:
 * `echo_text({ text })` answers "echo: TEXT" and records each call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface TinyMcpServer {
  /** The MCP endpoint: http://127.0.0.1:PORT/mcp */
  readonly url: string;
  readonly calls: readonly { readonly tool: string; readonly text: string }[];
  close(): Promise<void>;
}

export async function startTinyMcpServer(): Promise<TinyMcpServer> {
  const calls: { tool: string; text: string }[] = [];
  const mcpFor = () => {
    const mcp = new McpServer({ name: "tiny", version: "1.0.0" });
    mcp.registerTool("echo_text", { description: "Echo the text back.", inputSchema: { text: z.string() } }, ({ text }) => {
      calls.push({ tool: "echo_text", text });
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    });
    return mcp;
  };
  const server = createServer((req, res) => {
    if (req.url !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    // Stateless: a fresh server and transport per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const mcp = mcpFor();
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    mcp
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
