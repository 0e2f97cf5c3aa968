import type { RequestId, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { TOOL_ACCESS } from "../app/access.js";
import type { WaitContext } from "../app/waits.js";
import { type OutputShape, TOOL_CONTRACTS, type ToolName } from "../contracts/tools/toolContracts.js";
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

export interface McpToolContext extends WaitContext {
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
  /** The request's W3C `traceparent` header when it carried a valid one: work the call starts joins that trace (docs/telemetry.md). */
  readonly traceParent?: string;
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
  /** The structuredContent of a successful call; tools/list shows it (with the failure envelope) as outputSchema. */
  readonly outputSchema: OutputShape;
  readonly capability: McpCapability;
  readonly annotations?: ToolAnnotations;
  /**
   * Runs with arguments already parsed by `inputSchema`. Throw an AppError
   * for an expected denial; anything else is reported as orchestration_error
   * and logged by the endpoint.
   */
  handler(input: I, ctx: McpToolContext): Promise<McpToolResult>;
}

export interface McpToolkit {
  readonly name: string;
  /** Tools of any input type (the handler is a method, so it is compared bivariantly). */
  readonly tools: readonly McpToolDefinition[];
}

/** Define a tool: the handler's input is typed by the input schema, its result by the output schema. */
export function defineTool<S extends z.ZodObject, O extends OutputShape>(
  tool: Omit<McpToolDefinition<z.output<S>>, "inputSchema" | "outputSchema" | "handler"> & {
    readonly inputSchema: S;
    readonly outputSchema: O;
    handler(input: z.output<S>, ctx: McpToolContext): Promise<z.input<O>>;
  },
): McpToolDefinition<z.output<S>> {
  // S is a ZodObject whose output is z.output<S>; TypeScript cannot see that for a generic S.
  return tool as unknown as McpToolDefinition<z.output<S>>;
}

type ContractOf<N extends ToolName> = (typeof TOOL_CONTRACTS)[N];

/**
 * Define one of Loom's tools: its schemas come from the tool contract table
 * (src/contracts/tools), its readOnlyHint from the app's access table.
 */
export function contractTool<N extends ToolName>(
  name: N,
  tool: Omit<McpToolDefinition, "name" | "inputSchema" | "outputSchema" | "handler"> & {
    handler(input: z.output<ContractOf<N>["input"]>, ctx: McpToolContext): Promise<z.input<ContractOf<N>["output"]>>;
  },
): McpToolDefinition<z.output<ContractOf<N>["input"]>> {
  const { input, output } = TOOL_CONTRACTS[name];
  const definition: McpToolDefinition = {
    ...tool,
    name,
    inputSchema: input as z.ZodObject,
    outputSchema: output,
    // A tool may drop the hint its access entry gives (one that calls others), never claim it.
    annotations: { ...tool.annotations, readOnlyHint: TOOL_ACCESS[name] === "read" && tool.annotations?.readOnlyHint !== false },
    handler: (args, ctx) => tool.handler(args as never, ctx),
  };
  return definition as McpToolDefinition<z.output<ContractOf<N>["input"]>>;
}

export function defineToolkit(name: string, tools: readonly McpToolDefinition[]): McpToolkit {
  return { name, tools };
}

export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
