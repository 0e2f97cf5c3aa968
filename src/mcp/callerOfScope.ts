import type { Caller } from "../app/caller.js";
import type { McpInvocationScope } from "./credentialRegistry.js";
import type { McpToolContext } from "./toolkit.js";

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

/** The caller of a tool call that may start work: its scope's caller with the call's inbound trace context (docs/telemetry.md). */
export function callerOfCall(call: Pick<McpToolContext, "scope" | "traceParent">): Caller {
  const caller = callerOfScope(call.scope);
  return call.traceParent === undefined ? caller : { ...caller, traceParent: call.traceParent };
}
