import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, RequestId, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpInvocationScope } from "./credentialRegistry.js";
import { AppError, isUnexpectedFailure, toFailure } from "../app/errors.js";
import { FailureCode, FailureEnvelopeSchema } from "../contracts/failures.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import type { McpProgressUpdate, McpToolContext, McpToolDefinition, McpToolkit } from "./toolkit.js";
import { TOOL_NAME_PATTERN } from "./toolkit.js";
import { REFUSED_ARGUMENTS_META } from "./toolArguments.js";
import { formatTraceParent, parseTraceParent } from "../contracts/traceContext.js";
import { TOOL_PROFILES, type ToolProfile } from "../contracts/tools/discoveryTools.js";
import { listedIn } from "../contracts/tools/toolProfiles.js";
import { type McpTaskOperations, TASKS_CAPABILITY, TaskStatusNotifier, callToolAsTask, installTaskHandlers, taskExecution } from "./toolTasks.js";

/**
 * The SDK's low-level `Server` wired to Loom's toolkits. Loom, not the SDK,
 * lists the tools (JSON Schema from zod 4), checks capabilities, validates
 * arguments and turns every thrown value into an OrchestratorMcpFailure result.
 */

export class McpToolCatalogError extends Error {
  constructor(
    readonly code: "duplicate_tool" | "invalid_tool_name" | "invalid_input_schema",
    message: string,
  ) {
    super(message);
    this.name = "McpToolCatalogError";
  }
}

export interface McpToolCatalog {
  /** The tools/list entries, computed once. */
  readonly listing: readonly Tool[];
  /** What tools/list shows a credential of the profile (computed once): the profile trims the listing, never what may be called. */
  listingFor(profile: ToolProfile): readonly Tool[];
  get(name: string): McpToolDefinition | undefined;
}

/** Index the toolkits' tools by name; throws on duplicates or a non-object schema. */
export function buildToolCatalog(toolkits: readonly McpToolkit[]): McpToolCatalog {
  const byName = new Map<string, McpToolDefinition>();
  const listing: Tool[] = [];
  for (const toolkit of toolkits) {
    for (const tool of toolkit.tools) {
      if (!TOOL_NAME_PATTERN.test(tool.name)) {
        throw new McpToolCatalogError("invalid_tool_name", `tool name ${JSON.stringify(tool.name)} in toolkit ${toolkit.name} is not [A-Za-z0-9_.-]{1,128}`);
      }
      if (byName.has(tool.name)) {
        throw new McpToolCatalogError("duplicate_tool", `tool ${tool.name} is defined twice (toolkit ${toolkit.name})`);
      }
      byName.set(tool.name, tool);
      listing.push(toolListing(tool));
    }
  }
  const byProfile = new Map(TOOL_PROFILES.map((profile) => [profile, listing.filter((tool) => listedIn(profile, tool.name))]));
  return { listing, listingFor: (profile) => byProfile.get(profile) ?? listing, get: (name) => byName.get(name) };
}

/** A tool's tools/list entry: name, description, input JSON Schema (from zod 4), outputSchema with the failure envelope, annotations. */
export function toolListing(tool: McpToolDefinition): Tool {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.inputSchema, { io: "input", unrepresentable: "any" });
  if (schema.type !== "object") {
    throw new McpToolCatalogError("invalid_input_schema", `tool ${tool.name}: inputSchema must be a zod object`);
  }
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: schema as Tool["inputSchema"],
    outputSchema: outputListing(tool),
    execution: taskExecution(tool.name),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  };
}

/**
 * The failure envelope's JSON Schema, built once: every tool's outputSchema
 * holds this one definition. It is inlined in each, not `$ref`'d: MCP resolves
 * a `$ref` only within one tool's schema, so a per-tool `$defs` entry would
 * still be one copy per tool plus the reference (docs/benchmarks.md, "tools/list bytes").
 */
const FAILURE_ENVELOPE_LISTING: Readonly<Record<string, unknown>> = (() => {
  const { $schema: _ignored, ...failure } = z.toJSONSchema(FailureEnvelopeSchema, { io: "output", unrepresentable: "any" });
  return failure;
})();

/**
 * The tool's outputSchema: its success shape, or the failure envelope a failed
 * call answers with (`isError: true`, `structuredContent: { error }`), so a
 * client that validates structuredContent accepts both.
 */
function outputListing(tool: McpToolDefinition): NonNullable<Tool["outputSchema"]> {
  const { $schema: _ignored, ...success } = z.toJSONSchema(tool.outputSchema, { io: "output", unrepresentable: "any" });
  // A union of successes (a dry run's answer beside the real one) lists each beside the failure envelope.
  const successes = Array.isArray(success.anyOf) && Object.keys(success).length === 1 ? (success.anyOf as Record<string, unknown>[]) : [success];
  return { type: "object", anyOf: [...successes, FAILURE_ENVELOPE_LISTING] };
}

export interface ToolServerOptions {
  readonly catalog: McpToolCatalog;
  readonly serverName: string;
  readonly version: string;
  readonly log: (line: string) => void;
  /** The scope of the session's caller, as resolved on the latest request. */
  readonly scope: () => McpInvocationScope;
  /** Aborted when the HTTP response a call answers on goes away. */
  readonly responseSignal?: (requestId: RequestId) => AbortSignal | undefined;
  /** With them the server advertises the tasks capability and answers tasks/* (docs/mcp.md, "Tasks"). */
  readonly tasks?: McpTaskOperations;
}

/** One SDK Server per MCP session; connect it to that session's transport. */
export function createToolServer(options: ToolServerOptions): Server {
  const { catalog, log } = options;
  const { tasks } = options;
  const capabilities = { tools: { listChanged: false }, ...(tasks === undefined ? {} : { tasks: TASKS_CAPABILITY }) };
  const server = new Server({ name: options.serverName, version: options.version }, { capabilities });
  const notifier = tasks === undefined ? null : new TaskStatusNotifier(server, tasks, log);
  server.onclose = () => notifier?.close();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...catalog.listingFor(options.scope().toolProfile)] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const progressToken = extra._meta?.progressToken;
    const responseSignal = options.responseSignal?.(extra.requestId);
    const signal = responseSignal === undefined ? extra.signal : AbortSignal.any([extra.signal, responseSignal]);
    let progressFailed = false;
    const traceParent = inboundTraceParent(extra.requestInfo?.headers.traceparent);
    const ctx: McpToolContext = {
      scope: options.scope(),
      signal,
      requestId: extra.requestId,
      ...(traceParent === null ? {} : { traceParent }),
      async progress(update: McpProgressUpdate) {
        if (progressToken === undefined || signal.aborted || progressFailed) return;
        try {
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken, ...progressParams(update) } });
        } catch (error) {
          // Progress is advisory: a lost stream must not fail the call.
          progressFailed = true;
          log(`mcp: progress for ${request.params.name} not delivered: ${(error as Error).message}`);
        }
      },
    };
    const refused = request.params._meta?.[REFUSED_ARGUMENTS_META];
    const refusedArguments = typeof refused === "string" ? refused : undefined;
    const call = (name: string, args: unknown, context: McpToolContext) => callTool(catalog, name, args, context, log, refusedArguments);
    if (request.params.task !== undefined && notifier !== null && tasks !== undefined) {
      const parse = (name: string, args: unknown, context: McpToolContext) => parseToolCall(catalog, name, args, context, refusedArguments).input;
      const created = await callToolAsTask(tasks, { call, parse, log }, request.params.name, request.params.arguments, request.params.task, ctx);
      notifier.watch(ctx.scope, created.task);
      return created;
    }
    return call(request.params.name, request.params.arguments, ctx);
  });
  if (tasks !== undefined) installTaskHandlers(server, tasks, { scope: options.scope, log, responseSignal: options.responseSignal, toolResult: successResult });
  server.onerror = (error) => log(`mcp: ${error.message}`);
  return server;
}

/**
 * Look up, authorize, validate and run one tool call; never throws.
 * `refusedArguments` is the JSON boundary's reason to refuse the arguments
 * (src/mcp/toolArguments.ts): the call answers invalid_request.
 */
export async function callTool(
  catalog: McpToolCatalog,
  name: string,
  args: unknown,
  ctx: McpToolContext,
  log: (line: string) => void,
  refusedArguments?: string,
): Promise<CallToolResult> {
  try {
    const { tool, input } = parseToolCall(catalog, name, args, ctx, refusedArguments);
    const result = await tool.handler(input, ctx);
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      throw new TypeError(`tool ${name} returned ${Array.isArray(result) ? "an array" : typeof result}, not an object`);
    }
    return successResult(result);
  } catch (error) {
    if (isUnexpectedFailure(error)) {
      log(`mcp: tool ${name} (request ${String(ctx.requestId)}) failed: ${describe(error)}`);
    }
    const failure = toFailure(error);
    return { isError: true, content: [{ type: "text", text: `${failure.code}: ${failure.message}` }], structuredContent: { error: failure } };
  }
}

/** Look up, authorize and validate one tool call: the tool and its parsed input, or the AppError the call answers. */
export function parseToolCall(catalog: McpToolCatalog, name: string, args: unknown, ctx: McpToolContext, refusedArguments?: string) {
  const tool = catalog.get(name);
  if (tool === undefined) {
    throw new AppError(FailureCode.invalid_request, `unknown tool ${JSON.stringify(name)}`);
  }
  if (!ctx.scope.capabilities.includes(tool.capability)) {
    throw new AppError(FailureCode.capability_denied, `tool ${name} needs the ${tool.capability} capability, which this credential does not grant`);
  }
  if (refusedArguments !== undefined) {
    throw new AppError(FailureCode.invalid_request, `invalid arguments for ${name}: ${refusedArguments}`);
  }
  const parsed = tool.inputSchema.safeParse(args ?? {});
  if (!parsed.success) {
    throw new AppError(FailureCode.invalid_request, `invalid arguments for ${name}: ${formatZodIssues(parsed.error)}`);
  }
  return { tool, input: parsed.data };
}

/** A tool's answer: `structuredContent` and the same JSON as a text block. */
function successResult(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/** A malformed or repeated traceparent header is ignored, as W3C trace context asks: the call runs untraced. */
function inboundTraceParent(header: string | string[] | undefined): string | null {
  const parsed = typeof header === "string" ? parseTraceParent(header) : null;
  return parsed === null ? null : formatTraceParent(parsed);
}

function progressParams(update: McpProgressUpdate): McpProgressUpdate {
  return {
    progress: update.progress,
    ...(update.total === undefined ? {} : { total: update.total }),
    ...(update.message === undefined ? {} : { message: update.message }),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
}
