import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { abortIsolatingFetch } from "./abortIsolatingFetch.js";

/**
 * The MCP client of Loom's outside callers (the `loom` CLI, tests, benchmarks):
 * the official SDK Client over Streamable HTTP with a bearer token. It imports
 * nothing from the server, so it talks to Loom only over the wire.
 */

export interface ToolCallOutcome {
  readonly isError: boolean;
  readonly structured: Record<string, unknown>;
  /** The failure code when isError (`structuredContent.error.code`). */
  readonly errorCode: string | null;
  /** The failure message when isError, else null. */
  readonly errorMessage: string | null;
}

export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface ToolCallOptions {
  /** Asks the server for progress notifications and receives them. */
  readonly onprogress?: (progress: ToolProgress) => void;
  /** Milliseconds before the SDK gives up on the answer; default 120,000. */
  readonly timeout?: number;
  /** A progress notification restarts the timeout (long waits that report progress). */
  readonly resetTimeoutOnProgress?: boolean;
}

export class LoomMcpClient {
  private constructor(private readonly client: Client) {}

  /** Connect and initialize; rejects when the server does not answer or refuses the token. */
  static async connect(mcpUrl: string, token: string, name = "loom-client"): Promise<LoomMcpClient> {
    const client = new Client({ name, version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: abortIsolatingFetch,
    });
    await client.connect(transport);
    return new LoomMcpClient(client);
  }

  async listToolNames(): Promise<string[]> {
    return (await this.listTools()).map((tool) => tool.name).sort();
  }

  /** tools/list: every tool with its input and output schemas. */
  async listTools(): Promise<Tool[]> {
    const { tools } = await this.client.listTools();
    return tools;
  }

  /** One tools/call. A tool failure is an outcome with isError, not a rejection. */
  async call(name: string, args: Record<string, unknown> = {}, options: ToolCallOptions = {}): Promise<ToolCallOutcome> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
      timeout: options.timeout ?? 120_000,
      ...(options.resetTimeoutOnProgress === true ? { resetTimeoutOnProgress: true } : {}),
    });
    const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
    if (result.isError !== true) return { isError: false, structured, errorCode: null, errorMessage: null };
    const failure = structured.error as { code?: unknown; message?: unknown } | undefined;
    return {
      isError: true,
      structured,
      errorCode: typeof failure?.code === "string" ? failure.code : null,
      errorMessage: typeof failure?.message === "string" ? failure.message : firstText(result.content),
    };
  }

  /** Call and expect success; throws with the failure otherwise. */
  async ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}, options: ToolCallOptions = {}): Promise<T> {
    const outcome = await this.call(name, args, options);
    if (outcome.isError) throw new Error(`${name} failed: ${JSON.stringify(outcome.structured)}`);
    return outcome.structured as T;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

function firstText(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const block = content.find((c): c is { type: "text"; text: string } => (c as { type?: unknown }).type === "text");
  return block?.text ?? null;
}
