import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../../../app/errors.js";
import { FailureEnvelopeSchema } from "../../../contracts/failures.js";
import type { LoomToolsInput, LoomToolsOutput, ToolDescription } from "../../../contracts/tools/discoveryTools.js";
import { listedIn } from "../../../contracts/tools/toolProfiles.js";
import { McpCapability } from "../../credentialRegistry.js";
import { type McpToolContext, type McpToolkit, contractTool, defineToolkit } from "../../toolkit.js";
import { buildToolCatalog, callTool } from "../../toolServer.js";

/**
 * loom_tools: how an agent whose tool profile lists only the core set reaches
 * every other tool (docs/mcp.md, "Tool profiles"). It describes the tools of
 * the toolkits it is given (found by query words or exact names) and calls
 * one of them as tools/call would: the same capability check, argument
 * validation and handler, under the caller's own credential, so a call
 * through it may do exactly what a direct call may. It is the MCP layer's own
 * tool: what it reads is the MCP listing, not application state.
 */

/** At most this many tools answer a query, best match first. */
export const MAX_QUERY_MATCHES = 10;

export function discoveryToolkit(toolkits: readonly McpToolkit[], log: (line: string) => void): McpToolkit {
  const catalog = buildToolCatalog(toolkits);
  return defineToolkit("discovery", [
    contractTool("loom_tools", {
      description:
        "Find Loom's other tools and call them. Your tools/list may show only the core tools; every Loom tool is still available. query: words matched against tool names and descriptions (e.g. \"list threads\"); names: exact tool names. Answers each tool's name, description and inputSchema. call {name, arguments}: run that tool with those arguments and answer its result (or its failure).",
      capability: McpCapability.preview,
      // A call through it may write: a client must not approve it as a read.
      annotations: { readOnlyHint: false },
      handler: (input, ctx) => answer(input, ctx),
    }),
  ]);

  async function answer(input: LoomToolsInput, ctx: McpToolContext): Promise<LoomToolsOutput> {
    const profile = ctx.scope.toolProfile;
    const describe = (tool: Tool): ToolDescription => ({
      name: tool.name,
      description: tool.description ?? "",
      inputSchema: tool.inputSchema,
      readOnly: tool.annotations?.readOnlyHint === true,
      listed: listedIn(profile, tool.name),
    });
    const names = input.names ?? [];
    const found = [...new Map([...byNames(catalog.listing, names), ...byQuery(catalog.listing, input.query)].map((tool) => [tool.name, tool])).values()];
    const everything = input.query === undefined && input.names === undefined && input.call === undefined;
    const tools = (everything ? catalog.listing : found).map(describe);
    const unknownNames = names.filter((name) => catalog.get(name) === undefined);
    if (input.call === undefined) return { profile, tools, unknownNames, call: null };
    // A model may pass the name its client shows (mcp__t3-code__t3_thread_list); Loom's tool names hold no "__".
    const name = input.call.name.split("__").at(-1) ?? input.call.name;
    const result = await callTool(catalog, name, input.call.arguments, ctx, log);
    const structured = result.structuredContent ?? {};
    if (result.isError === true) {
      const failure = FailureEnvelopeSchema.safeParse(structured);
      if (!failure.success) throw new Error(`tool ${name} failed without a failure envelope`);
      throw new AppError(failure.data.error.code, failure.data.error.message);
    }
    return { profile, tools, unknownNames, call: { name, result: structured } };
  }
}

function byNames(listing: readonly Tool[], names: readonly string[]): Tool[] {
  return names.flatMap((name) => listing.filter((tool) => tool.name === name));
}

/** Tools any query word (two characters or more) appears in, by name (counted twice) or description; best first. */
function byQuery(listing: readonly Tool[], query: string | undefined): Tool[] {
  if (query === undefined) return [];
  const words = [...new Set(query.toLowerCase().split(/[^a-z0-9]+/))].filter((word) => word.length >= 2);
  const scored = listing.map((tool, order) => {
    const name = tool.name.toLowerCase();
    const description = (tool.description ?? "").toLowerCase();
    const score = words.reduce((sum, word) => sum + (name.includes(word) ? 2 : 0) + (description.includes(word) ? 1 : 0), 0);
    return { tool, order, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_QUERY_MATCHES)
    .map((entry) => entry.tool);
}
