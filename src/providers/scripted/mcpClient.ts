import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LOOM_VERSION } from "../../version.js";
import { isPlainObject } from "./template.js";

/**
 * The scripted agent's MCP client: the official SDK client over Streamable
 * HTTP with the session's bearer token, exactly what a real agent CLI sends.
 * It connects on the first call of a turn and is let go when the turn ends
 * (`release`), so an idle session holds no MCP session, stream or socket;
 * the next turn's first call connects again. The token is
 * sent only as a header; every error message this module produces has it
 * redacted, because those messages end up in events.
 */

export interface McpEndpoint {
  readonly url: string;
  readonly token: string;
}

/** A tools/call answer as the wire carries it. `isError` results are answers, not exceptions. */
export interface ToolCallResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly [key: string]: unknown;
}

export const McpCallErrorCode = {
  /** Connecting or sending failed: HTTP status, refused connection, protocol error. */
  transport: "mcp_transport_failed",
  closed: "mcp_client_closed",
} as const;
export type McpCallErrorCode = (typeof McpCallErrorCode)[keyof typeof McpCallErrorCode];

/** A call that got no tool answer. The message never contains the token. */
export class McpCallError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly code: McpCallErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "McpCallError";
    this.retryable = code === McpCallErrorCode.transport;
  }
}

export class ScriptedMcpClient {
  private connection: Promise<Client> | null = null;
  private closed = false;

  constructor(private readonly endpoint: McpEndpoint) {}

  /** Call one tool. Rejects with McpCallError; a failed connect is retried by the next call. */
  async callTool(name: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<ToolCallResult> {
    if (this.closed) {
      throw new McpCallError(McpCallErrorCode.closed, "the MCP client is closed");
    }
    // The SDK never removes the abort listener it adds to a request's signal,
    // so each call gets a signal of its own, linked to the turn's only while
    // the call runs: a long script does not pile listeners on the turn signal.
    const call = new AbortController();
    const forward = () => call.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    try {
      const client = await this.connect(call.signal);
      const result = await client.callTool({ name, arguments: { ...args } }, undefined, {
        signal: call.signal,
        // Loom's blocking tools send progress while they wait; keep the call alive.
        onprogress: () => undefined,
        resetTimeoutOnProgress: true,
      });
      return result;
    } catch (error) {
      throw new McpCallError(McpCallErrorCode.transport, this.redact(messageOf(error)));
    } finally {
      signal.removeEventListener("abort", forward);
    }
  }

  /** Ends the MCP session (best effort) and closes the transport. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.release();
  }

  /**
   * Let the current connection go (end its MCP session, close its transport)
   * and stay usable: the next call connects again. Called when a turn ends.
   */
  async release(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    if (connection === null) return;
    const client = await connection.catch(() => null);
    if (client === null) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }

  private connect(signal: AbortSignal): Promise<Client> {
    if (this.connection === null) {
      const attempt = this.open(signal);
      this.connection = attempt;
      void attempt.catch(() => {
        if (this.connection === attempt) this.connection = null;
      });
    }
    return this.connection;
  }

  private async open(signal: AbortSignal): Promise<Client> {
    const client = new Client({ name: "loom-scripted", version: LOOM_VERSION });
    const transport = new StreamableHTTPClientTransport(new URL(this.endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${this.endpoint.token}` } },
    });
    try {
      await client.connect(transport, { signal });
      return client;
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  private redact(message: string): string {
    const { token } = this.endpoint;
    return token === "" ? message : message.split(token).join("[redacted]");
  }
}

/**
 * The value a script stores for a tool result: its structuredContent, else
 * its text content parsed as JSON, else that text, else the whole result.
 */
export function toolResultValue(result: ToolCallResult): unknown {
  if (result.structuredContent !== undefined) {
    return result.structuredContent;
  }
  const texts = (result.content ?? []).flatMap((part) =>
    isPlainObject(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : [],
  );
  if (texts.length === 0) {
    return result;
  }
  const text = texts.join("");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The error's message, led by the HTTP status when the endpoint answered with one. */
function messageOf(error: unknown): string {
  if (error instanceof StreamableHTTPError && typeof error.code === "number" && error.code > 0) {
    return `HTTP ${error.code} from the MCP endpoint: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}
