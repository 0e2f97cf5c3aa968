import type { Caller } from "../app/caller.js";
import type { McpInvocationScope } from "./credentialRegistry.js";

/** The app-layer caller a resolved MCP credential stands for. */
export function callerOfScope(scope: McpInvocationScope): Caller {
  if (scope.kind === "owner") return { kind: "owner", environmentId: scope.environmentId };
  return {
    kind: "agent",
    environmentId: scope.environmentId,
    threadId: scope.threadId,
    providerInstanceId: scope.providerInstanceId,
    providerSessionId: scope.providerSessionId,
  };
}
