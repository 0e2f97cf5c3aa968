import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NO_ZOD_ISSUES, formatIssuePath, formatZodIssues, zodIssueLines } from "./zodIssues.js";

function errorOf(schema: z.ZodType, value: unknown): z.ZodError {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error("expected the value to be refused");
  return parsed.error;
}

describe("formatZodIssues", () => {
  const schema = z.strictObject({ task: z.string(), target: z.object({ models: z.array(z.string()) }) });

  it("says `path: message` per issue, keys joined with '.', indexes in brackets, issues with '; '", () => {
    const error = errorOf(schema, { task: 1, target: { models: ["a", 2] } });
    expect(zodIssueLines(error)).toEqual([
      "task: Invalid input: expected string, received number",
      "target.models[1]: Invalid input: expected string, received number",
    ]);
    expect(formatZodIssues(error)).toBe("task: Invalid input: expected string, received number; target.models[1]: Invalid input: expected string, received number");
  });

  it("a root issue is its message alone, or the prefix when there is one", () => {
    const error = errorOf(schema, "not an object");
    expect(formatZodIssues(error)).toBe("Invalid input: expected object, received string");
    expect(formatZodIssues(error, { pathPrefix: ["options"] })).toBe("options: Invalid input: expected object, received string");
  });

  it("puts the prefix in front of every path; unknown keys keep zod's message, which names them", () => {
    const error = errorOf(schema, { task: "t", target: { models: [] }, colour: 1 });
    expect(zodIssueLines(error, { pathPrefix: ["options"] })).toEqual(['options: Unrecognized key: "colour"']);
  });

  it("names the top level (root) when asked, as the config loader does", () => {
    expect(formatZodIssues(errorOf(schema, "x"), { labelRoot: true })).toBe("(root): Invalid input: expected object, received string");
  });

  it("an error without issues still says something", () => {
    expect(formatZodIssues(new z.ZodError([]))).toBe(NO_ZOD_ISSUES);
  });
});

describe("formatIssuePath", () => {
  it("renders indexes in brackets and keys with dots", () => {
    expect(formatIssuePath(["providers", 0, "models", 2])).toBe("providers[0].models[2]");
    expect(formatIssuePath([])).toBe("(root)");
  });
});
