import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOOL_CONTRACTS, type ToolName } from "../contracts/tools/toolContracts.js";

/**
 * The tool calls the docs show a scripted model making (`toolCall: { tool,
 * arguments }`, in JSON or TypeScript) carry arguments the named Loom tool
 * accepts, so an example copied from the docs delegates instead of failing
 * validation.
 */

const REPO = join(import.meta.dirname, "..", "..");
const CALL = /"?tool"?\s*:\s*"([a-z_0-9]+)"\s*,\s*"?arguments"?\s*:\s*(\{[^{}]*\})/g;

function markdownPages(): string[] {
  const docs = readdirSync(join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name));
  return ["README.md", ...docs];
}

/** `{ task: "x" }` and `{ "task": "x" }` both become JSON. */
function objectLiteral(text: string): unknown {
  return JSON.parse(text.replace(/([{,]\s*)([A-Za-z_]\w*)\s*:/g, '$1"$2":'));
}

function exampleCalls(): { page: string; tool: string; args: unknown }[] {
  const calls: { page: string; tool: string; args: unknown }[] = [];
  for (const page of markdownPages()) {
    const text = readFileSync(join(REPO, page), "utf8");
    for (const match of text.matchAll(CALL)) calls.push({ page, tool: match[1]!, args: objectLiteral(match[2]!) });
  }
  return calls;
}

describe("tool calls in the docs", () => {
  it("are accepted by the Loom tool they name", () => {
    const calls = exampleCalls().filter((call) => call.tool in TOOL_CONTRACTS);
    expect(calls.some((call) => call.tool === "delegate_task")).toBe(true);
    for (const call of calls) {
      const parsed = TOOL_CONTRACTS[call.tool as ToolName].input.safeParse(call.args);
      expect(parsed.success, `${call.page}: ${call.tool} ${JSON.stringify(call.args)}`).toBe(true);
    }
  });

  it("reads both spellings of an arguments object", () => {
    expect(objectLiteral('{ task: "x", mode: "wait" }')).toEqual({ task: "x", mode: "wait" });
    expect(objectLiteral('{ "task": "Summarize {{lastUser}}" }')).toEqual({ task: "Summarize {{lastUser}}" });
    expect(TOOL_CONTRACTS.delegate_task.input.safeParse({ prompt: "x" }).success).toBe(false);
  });
});
