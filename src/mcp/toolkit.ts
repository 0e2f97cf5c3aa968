import type { RequestId, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { McpCapability, McpInvocationScope } from "./credentialRegistry.js";

/**
 * The contract between a toolkit and the MCP endpoint. A toolkit declares its
 * tools; the endpoint lists them, checks the capability, validates arguments
 * with the tool's zod schema and calls the handler only with parsed input.
 */

export interface McpProgressUpdate {
  /** Must increase from one update to the next within a call (MCP spec). */
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface McpToolContext {
  /** Who is calling: resolved from the bearer token of this very request. */
  readonly scope: McpInvocationScope;
  /**
   * Aborted when the client cancels the call (notifications/cancelled), drops
   * the HTTP response the result would travel on, or its session closes
   * (DELETE, revoked credential, idle sweep, server shutdown).
   */
  readonly signal: AbortSignal;
  /**
   * Send notifications/progress for this call. A no-op when the client gave no
   * progressToken or the call was aborted; never throws.
   */
  progress(update: McpProgressUpdate): Promise<void>;
  /** The JSON-RPC id of the tools/call request. */
  readonly requestId: RequestId;
}

/** What a handler returns: it becomes `structuredContent` and a JSON text block. */
export type McpToolResult = Record<string, unknown>;

export interface McpToolDefinition<I = unknown> {
  /** Unique across every mounted toolkit; `[A-Za-z0-9_.-]{1,128}`. */
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  /** A zod object schema; its JSON Schema is what tools/list shows. */
  readonly inputSchema: z.ZodObject & z.ZodType<I>;
  readonly capability: McpCapability;
  readonly annotations?: ToolAnnotations;
  /**
   * Runs with arguments already parsed by `inputSchema`. Throw an
   * OrchestratorMcpError for an expected denial; anything else is reported as
   * orchestration_error and logged by the endpoint.
   */
  handler(input: I, ctx: McpToolContext): Promise<McpToolResult>;
}

export interface McpToolkit {
  readonly name: string;
  /** Tools of any input type (the handler is a method, so it is compared bivariantly). */
  readonly tools: readonly McpToolDefinition[];
}

/** Define a tool and keep the handler's input typed by its schema. */
export function defineTool<S extends z.ZodObject>(
  tool: Omit<McpToolDefinition<z.output<S>>, "inputSchema"> & { readonly inputSchema: S },
): McpToolDefinition<z.output<S>> {
  // S is a ZodObject whose output is z.output<S>; TypeScript cannot see that for a generic S.
  return tool as unknown as McpToolDefinition<z.output<S>>;
}

export function defineToolkit(name: string, tools: readonly McpToolDefinition[]): McpToolkit {
  return { name, tools };
}

export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
