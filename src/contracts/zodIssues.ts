import type { z } from "zod";

/**
 * One way to say what is wrong with a value a zod schema refused, used
 * wherever such a message reaches a person or a model (MCP tool arguments,
 * HTTP commands, the config file, provider instance options): `path: message`
 * per issue, e.g. `target.model: Invalid input: expected string, received
 * number` or `providers[0].options.runtimeModes[1]: Invalid option`.
 */

/** What formatZodIssues says when the error lists no issue (zod always lists one). */
export const NO_ZOD_ISSUES = "the value does not match its schema";

/** `providers[0].models[2]`: indexes in brackets, keys with dots; `(root)` for the top level. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : `${out === "" ? "" : "."}${String(segment)}`;
  }
  return out === "" ? "(root)" : out;
}

export interface ZodIssueFormat {
  /** Put in front of every path (`["options"]` gives `options.turnDelayMs: ...`). */
  readonly pathPrefix?: readonly PropertyKey[];
  /** Name the top level `(root)`; by default an issue there is its message alone. */
  readonly labelRoot?: boolean;
}

/** One `path: message` line per issue, in zod's order. */
export function zodIssueLines(error: z.core.$ZodError, format: ZodIssueFormat = {}): string[] {
  return error.issues.map((issue) => {
    const path = [...(format.pathPrefix ?? []), ...issue.path];
    if (path.length === 0 && format.labelRoot !== true) return issue.message;
    return `${formatIssuePath(path)}: ${issue.message}`;
  });
}

/** Every issue as `path: message`, joined with "; ". */
export function formatZodIssues(error: z.core.$ZodError, format: ZodIssueFormat = {}): string {
  const lines = zodIssueLines(error, format);
  return lines.length === 0 ? NO_ZOD_ISSUES : lines.join("; ");
}
