import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface ToolCallOutcome {
  readonly isError: boolean;
  readonly structured: Record<string, unknown>;
  /** The failure code when isError. */
  readonly errorCode: string | null;
}

/** A real MCP client over Streamable HTTP with a bearer token. */
export class LoomMcpClient {
  private constructor(private readonly client: Client) {}

  static async connect(mcpUrl: string, token: string, name = "loom-test"): Promise<LoomMcpClient> {
    const client = new Client({ name, version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    return new LoomMcpClient(client);
  }

  async listToolNames(): Promise<string[]> {
    const { tools } = await this.client.listTools();
    return tools.map((tool) => tool.name).sort();
  }

  async call(name: string, args: Record<string, unknown> = {}, options: { onprogress?: (p: { progress: number; message?: string }) => void; timeout?: number } = {}): Promise<ToolCallOutcome> {
    const result = await this.client.callTool({ name, arguments: args }, undefined, {
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
      timeout: options.timeout ?? 120_000,
    });
    const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
    const isError = result.isError === true;
    const errorCode = isError ? ((structured.error as { code?: string } | undefined)?.code ?? null) : null;
    return { isError, structured, errorCode };
  }

  /** Call and expect success; throws with the failure otherwise. */
  async ok<T = Record<string, unknown>>(name: string, args: Record<string, unknown> = {}): Promise<T> {
    const outcome = await this.call(name, args);
    if (outcome.isError) throw new Error(`${name} failed: ${JSON.stringify(outcome.structured)}`);
    return outcome.structured as T;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
