import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { sendJson } from "../http/http.js";

/** Largest MCP request body (the SDK transport's own default). */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

export type McpBodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly status: 400 | 413; readonly rpcCode: number; readonly message: string };

/**
 * Read and parse a POST body as JSON. The endpoint parses it itself (and hands
 * it to the transport as `parsedBody`) so it can route on the message before
 * any session exists.
 */
export function readMcpBody(req: IncomingMessage, limit = MAX_MCP_BODY_BYTES): Promise<McpBodyResult> {
  const tooLarge = { ok: false, status: 413, rpcCode: -32000, message: `request body exceeds ${limit} bytes` } as const;
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(tooLarge);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: McpBodyResult): void => {
      if (settled) return;
      settled = true;
      chunks.length = 0;
      resolve(result);
    };
    // Past the limit the rest is drained and dropped (not destroyed), so the 413 can still be sent.
    req.on("data", (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) settle(tooLarge);
      else chunks.push(chunk);
    });
    req.on("error", () => settle({ ok: false, status: 400, rpcCode: -32000, message: "request body could not be read" }));
    req.on("end", () => {
      if (settled) return;
      try {
        settle({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown });
      } catch {
        settle({ ok: false, status: 400, rpcCode: -32700, message: "Parse error: request body is not valid JSON" });
      }
    });
  });
}

/** A JSON-RPC error response, shaped like the SDK transport's own. */
export function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, id: RequestId | null = null, headers: Record<string, string> = {}): void {
  sendJson(res, status, { jsonrpc: "2.0", error: { code, message }, id }, headers);
}
