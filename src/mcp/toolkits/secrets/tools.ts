import { callerOfScope } from "../../callerOfScope.js";
import { McpCapability } from "../../credentialRegistry.js";
import { contractTool, defineToolkit, type McpToolkit } from "../../toolkit.js";
import type { App } from "../../../app/app.js";

/** request_secret (spec 004 §3.5): the owner answers outside MCP (HTTP, UI). */
export function secretsToolkit(app: App): McpToolkit {
  return defineToolkit("secrets", [
    contractTool("request_secret", {
      description:
        "Ask the owner for a secret you need (a token, a password). Returns at once with status pending; when the owner provides it you get a follow-up turn, and the commands you run from then on in this session find it in envVarName. Never print it or put it in files, messages or tool arguments.",
      capability: McpCapability.orchestration,
      handler: (input, tool) => app.requestSecret(callerOfScope(tool.scope), input),
    }),
  ]);
}
