/** Tests use the same client as the CLI: src/client/loomMcpClient.ts. */
export { LoomMcpClient, type ToolCallOptions, type ToolCallOutcome } from "../client/loomMcpClient.js";
