import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { CLOSE_CONNECTION, readBody } from "../http/body.js";
import { sendJson } from "../http/http.js";

/** Largest MCP request body (the SDK transport's own default). */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

export type McpBodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 400 | 413; readonly rpcCode: number; readonly message: string; readonly headers: Readonly<Record<string, string>> };

/**
 * Read and parse a POST body as JSON. The endpoint parses it itself (and hands
 * it to the transport as `parsedBody`) so it can route on the message before
 * any session exists. Too large is answered after the client finished sending
 * and closes the connection (src/http/body.ts).
 */
export async function readMcpBody(req: IncomingMessage, limit = MAX_MCP_BODY_BYTES): Promise<McpBodyResult> {
  const read = await readBody(req, limit);
  if (!read.ok) {
    return read.reason === "too_large"
      ? { ok: false, status: 413, rpcCode: -32000, message: `request body exceeds ${limit} bytes`, headers: CLOSE_CONNECTION }
      : { ok: false, status: 400, rpcCode: -32000, message: "request body could not be read", headers: CLOSE_CONNECTION };
  }
  try {
    return { ok: true, value: JSON.parse(read.bytes.toString("utf8")) as unknown };
  } catch {
    return { ok: false, status: 400, rpcCode: -32700, message: "Parse error: request body is not valid JSON", headers: {} };
  }
}

/** A JSON-RPC error response, shaped like the SDK transport's own. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, id: RequestId | null = null, headers: Readonly<Record<string, string>> = {}): void {
  sendJson(res, status, { jsonrpc: "2.0", error: { code, message }, id }, { ...headers });
}
