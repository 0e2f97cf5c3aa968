import { z } from "zod";
import { McpCapability } from "../../credentialRegistry.js";
import { defineTool, defineToolkit } from "../../toolkit.js";

/**
 * Tools for benchmarks and tests only: the server mounts this toolkit when
 * asked to (the MCP echo baseline in bench/, endpoint tests), never by default.
 */
export const loomEchoTool = defineTool({
  name: "loom_echo",
  title: "Echo",
  description: "Return the given text unchanged. Diagnostics only: measures the MCP round trip.",
  inputSchema: z.object({ text: z.string().describe("Text to return") }),
  capability: McpCapability.preview,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (input) => Promise.resolve({ text: input.text }),
});

export const diagnosticsToolkit = defineToolkit("diagnostics", [loomEchoTool]);
