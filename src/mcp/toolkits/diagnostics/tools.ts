import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit } from "../../toolkit.js";

/**
 * Tools for benchmarks and tests only: the server mounts this toolkit when
 * asked to (the MCP echo baseline in bench/, endpoint tests), never by default.
 */
export const loomEchoTool = contractTool("loom_echo", {
  title: "Echo",
  description: "Return the given text unchanged. Diagnostics only: measures the MCP round trip.",
  capability: McpCapability.preview,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (input) => Promise.resolve({ text: input.text }),
});

export const diagnosticsToolkit = defineToolkit("diagnostics", [loomEchoTool]);
