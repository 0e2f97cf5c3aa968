import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOL_CONTRACTS, type ToolName } from "./toolContracts.js";

/**
 * Every tool input is bounded (docs/mcp.md, Input limits): each string has a
 * maxLength, each number a maximum, each array a maxItems, each map a
 * maxProperties, and objects admit no unknown keys.
 */

type Schema = Record<string, unknown>;

function unbounded(schema: Schema, path: string): string[] {
  const found: string[] = [];
  const visit = (node: unknown, at: string): void => {
    if (typeof node !== "object" || node === null) return;
    const s = node as Schema;
    for (const key of ["anyOf", "oneOf", "allOf"]) {
      if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((child, i) => visit(child, `${at}|${i}`));
    }
    switch (s.type) {
      case "string":
        if (typeof s.maxLength !== "number" && !Array.isArray(s.enum) && s.const === undefined) found.push(`${at}: string without maxLength`);
        break;
      case "number":
      case "integer":
        if (typeof s.maximum !== "number") found.push(`${at}: number without maximum`);
        break;
      case "array":
        if (typeof s.maxItems !== "number") found.push(`${at}: array without maxItems`);
        visit(s.items, `${at}[]`);
        break;
      case "object":
        if (s.additionalProperties !== false) {
          if (typeof s.maxProperties !== "number") found.push(`${at}: open object without maxProperties`);
          visit(s.propertyNames, `${at}{key}`);
          visit(s.additionalProperties, `${at}{value}`);
        }
        for (const [name, child] of Object.entries((s.properties as Record<string, unknown> | undefined) ?? {})) visit(child, `${at}.${name}`);
        break;
      default:
        break;
    }
  };
  visit(schema, path);
  return found;
}

describe("tool input limits", () => {
  it("every field of every tool input is bounded", () => {
    const problems = (Object.keys(TOOL_CONTRACTS) as ToolName[]).flatMap((tool) =>
      unbounded(z.toJSONSchema(TOOL_CONTRACTS[tool].input, { io: "input", unrepresentable: "any" }) as Schema, tool),
    );
    expect(problems).toEqual([]);
  });

  it("a 3 MB baseRef or worktreePath is refused", () => {
    const huge = "x".repeat(3 * 1024 * 1024);
    expect(TOOL_CONTRACTS.t3_thread_launch.input.safeParse({ message: "hi", baseRef: huge }).success).toBe(false);
    expect(TOOL_CONTRACTS.t3_thread_launch.input.safeParse({ message: "hi", worktreePath: huge }).success).toBe(false);
  });
});
