import type { z } from "zod";

/** `providers[0].models[2]`: indexes in brackets, keys with dots; `(root)` for the top level. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : `${out === "" ? "" : "."}${String(segment)}`;
  }
  return out === "" ? "(root)" : out;
}

/**
 * One line for everything a schema rejected: `path: message` per issue,
 * joined with "; " (e.g. `target.model: Invalid input: expected string,
 * received number`). Every transport, the command parser and the config
 * loader use it, so a bad input reads the same wherever it is refused. An
 * issue at the top level shows its message alone unless `labelRoot` is set.
 */
export function formatZodIssues(error: z.core.$ZodError, options: { readonly labelRoot?: boolean } = {}): string {
  const parts = error.issues.map((issue) => {
    const path = issue.path.length === 0 && options.labelRoot !== true ? "" : formatIssuePath(issue.path);
    return path === "" ? issue.message : `${path}: ${issue.message}`;
  });
  return parts.length === 0 ? "the input does not match its schema" : parts.join("; ");
}
