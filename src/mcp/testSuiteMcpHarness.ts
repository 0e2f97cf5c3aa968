import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CredentialScopeInput, type IssueOptions, type IssuedCredential, McpCredentialRegistry } from "./credentialRegistry.js";
import { type McpRoute, type McpRouteOptions, createMcpRoute } from "./httpEndpoint.js";
import type { McpToolkit } from "./toolkit.js";

/**
 * Test harness (excluded from the build): a real node:http server on
 * 127.0.0.1 mounting the MCP route, a real credential registry on an injected
 * clock, and helpers for the official SDK client and raw fetch requests.
 */

export const OWNER_TOKEN = "owner-token-for-tests-0123456789";
export const LATEST_TEST_PROTOCOL = "2025-06-18";

export interface McpHarness {
  readonly mcpUrl: string;
  readonly clock: { now: number };
  readonly registry: McpCredentialRegistry;
  readonly endpoint: McpRoute;
  readonly logs: string[];
  issue(input?: Partial<CredentialScopeInput>, options?: IssueOptions): IssuedCredential;
  /** Connect the SDK client with `Authorization: Bearer <token>`. */
  connect(token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }>;
  /** A raw POST of a JSON-RPC body with the headers a Streamable HTTP client sends. */
  post(body: unknown, options?: { token?: string | null; sessionId?: string; signal?: AbortSignal }): Promise<Response>;
  /** Initialize a session with raw fetch (no standalone GET stream); returns its id. */
  rawInitialize(token: string): Promise<string>;
  close(): Promise<void>;
}

export const TEST_SCOPE: CredentialScopeInput = {
  environmentId: "env-test",
  threadId: "thread:parent",
  providerInstanceId: "codex-main",
  providerSessionId: "provider-session:1",
};

export async function startMcpHarness(toolkits: readonly McpToolkit[], options: Partial<McpRouteOptions> = {}): Promise<McpHarness> {
  const clock = { now: 1_700_000_000_000 };
  const logs: string[] = [];
  const registry = new McpCredentialRegistry({ environmentId: TEST_SCOPE.environmentId, now: () => clock.now });
  registry.registerOwnerToken(OWNER_TOKEN);
  const endpoint = createMcpRoute({
    credentials: registry,
    toolkits,
    version: "0.0.0-test",
    log: (line) => logs.push(line),
    now: () => clock.now,
    sweepIntervalMs: 0,
    ...options,
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://loom.invalid");
    void endpoint.route(req, res, url).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.path ?? "/mcp"}`;
  const clients: Client[] = [];

  const post: McpHarness["post"] = (body, postOptions = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const token = postOptions.token === undefined ? OWNER_TOKEN : postOptions.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (postOptions.sessionId !== undefined) {
      headers["mcp-session-id"] = postOptions.sessionId;
      headers["mcp-protocol-version"] = LATEST_TEST_PROTOCOL;
    }
    return fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify(body), ...(postOptions.signal ? { signal: postOptions.signal } : {}) });
  };

  return {
    mcpUrl,
    clock,
    registry,
    endpoint,
    logs,
    issue: (input = {}, issueOptions = {}) => registry.issue({ ...TEST_SCOPE, ...input }, issueOptions),
    async connect(token) {
      const client = new Client({ name: "loom-test-client", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
      await client.connect(transport);
      clients.push(client);
      return { client, transport };
    },
    post,
    async rawInitialize(token) {
      const res = await post(initializeRequest(1), { token });
      const sessionId = res.headers.get("mcp-session-id");
      await res.text();
      if (res.status !== 200 || sessionId === null) throw new Error(`initialize failed with ${res.status}`);
      await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { token, sessionId })).text();
      return sessionId;
    },
    async close() {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      await endpoint.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function initializeRequest(id: number | string): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: LATEST_TEST_PROTOCOL, capabilities: {}, clientInfo: { name: "raw-fetch", version: "1.0.0" } },
  };
}

/** The JSON-RPC messages of a response, whether it came as JSON or as an SSE stream. */
export async function readMessages(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    return text === "" ? [] : [JSON.parse(text) as Record<string, unknown>];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > "data: ".length)
    .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
}
