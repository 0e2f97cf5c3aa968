import { isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { forbiddenKeyPath } from "../http/body.js";

/**
 * The JSON boundary of tool arguments. The SDK validates `tools/call` params
 * itself and answers a non-object `arguments` with a JSON-RPC -32603 and a raw
 * validation dump; JSON.parse keeps `__proto__` keys that zod would drop
 * silently. So before a body reaches the SDK, each tools/call whose arguments
 * are not a JSON object, or use a reserved key, gets `{}` as arguments and the
 * problem in its `_meta`; the tool server then answers it with the typed
 * invalid_request failure, like any other schema violation.
 */

/** The `_meta` key that carries a refused call's problem from the boundary to the tool server. */
export const REFUSED_ARGUMENTS_META = "loom/refused-arguments";

/** Screen every tools/call in a parsed body (one message or a batch); returns the body to hand to the SDK. */
export function screenToolCalls(body: unknown): unknown {
  return Array.isArray(body) ? body.map(screenMessage) : screenMessage(body);
}

function screenMessage(message: unknown): unknown {
  if (!isJSONRPCRequest(message) || message.method !== "tools/call") return message;
  const params = message.params;
  if (typeof params !== "object" || params === null || Array.isArray(params)) return message;
  const { [REFUSED_ARGUMENTS_META]: _clientSupplied, ...meta } = isObject(params._meta) ? params._meta : {};
  const problem = argumentsProblem(params.arguments);
  const screened: Record<string, unknown> = { ...params };
  const nextMeta = problem === null ? meta : { ...meta, [REFUSED_ARGUMENTS_META]: problem };
  if (Object.keys(nextMeta).length === 0) delete screened._meta;
  else screened._meta = nextMeta;
  if (problem !== null) screened.arguments = {};
  return { ...message, params: screened };
}

/** Why these arguments cannot reach a tool, or null when they can. */
export function argumentsProblem(args: unknown): string | null {
  if (args === undefined) return null;
  if (!isObject(args)) return `arguments must be a JSON object, not ${args === null ? "null" : Array.isArray(args) ? "an array" : `a ${typeof args}`}`;
  const forbidden = forbiddenKeyPath(args);
  return forbidden === null ? null : `arguments use the reserved key ${forbidden}; __proto__ and constructor are not accepted`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
