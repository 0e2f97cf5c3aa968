import type { z } from "zod";

/**
 * One way to say what is wrong with a value a zod schema refused, used
 * wherever such a message reaches a person or a model (MCP tool arguments,
 * provider instance options): `path: message` per issue, the path's keys
 * joined with ".", for example `target.model: Invalid input: expected
 * string, received number` or `options.runtimeModes.0: Invalid option`.
 */

/** What formatZodIssues says when the error lists no issue (zod always lists one). */
export const NO_ZOD_ISSUES = "the value does not match its schema";

/**
 * One `path: message` line per issue, in zod's order. `pathPrefix` is put in
 * front of every path (`["options"]` gives `options.turnDelayMs: ...`); an
 * issue at the root of an unprefixed value is its message alone.
 */
export function zodIssueLines(error: z.core.$ZodError, pathPrefix: readonly PropertyKey[] = []): string[] {
  return error.issues.map((issue) => {
    const path = [...pathPrefix, ...issue.path].map((key) => (typeof key === "symbol" ? key.toString() : String(key))).join(".");
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
}

/** Every issue as `path: message`, joined with "; ". */
export function formatZodIssues(error: z.core.$ZodError, pathPrefix: readonly PropertyKey[] = []): string {
  const lines = zodIssueLines(error, pathPrefix);
  return lines.length === 0 ? NO_ZOD_ISSUES : lines.join("; ");
}
