import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FailureEnvelopeSchema } from "../contracts/failures.js";
import { TOOL_CONTRACTS } from "../contracts/tools/toolContracts.js";
import { TOOL_LISTED_FROM } from "../contracts/tools/toolProfiles.js";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * What tools/list costs, read from a real server over Streamable HTTP with
 * the SDK client (docs/benchmarks.md, "tools/list bytes"). The ceilings sit a
 * little above today's figures (182,238 B for the listing since every tool
 * lists `execution.taskSupport`, MCP tasks; 51,906 B model-facing, since
 * loom_tools joined the list; 11,733 B model-facing for the core profile),
 * so a tool that grows
 * the list past them is a deliberate change of these figures, not an accident.
 */

/** With t3_merge_queue: 188,525 B listing (3,414 B of it its own) and 53,176 B model-facing (632 B its own). */
const LISTING_CEILING_BYTES = 190_000;
const MODEL_FACING_CEILING_BYTES = 54_000;
/** Issue 41's goal for the core profile is 20 KB model-facing; the ceiling holds today's figure. */
const CORE_MODEL_FACING_CEILING_BYTES = 12_500;

let h: LoomHarness;
let tools: Tool[];

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

beforeAll(async () => {
  h = await LoomHarness.start();
  tools = await h.owner.listTools();
});
afterAll(async () => {
  await h.close();
});

describe("tools/list size", () => {
  it("lists every contract tool within the stated ceilings", () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(TOOL_CONTRACTS).filter((name) => name !== "loom_echo").sort());
    // What a model pays per request: Claude Code sends name, description and input schema (outputSchema never reaches the model).
    const modelFacing = tools.reduce((sum, tool) => sum + bytes({ name: `mcp__t3-code__${tool.name}`, description: tool.description, input_schema: tool.inputSchema }), 0);
    expect(bytes({ tools })).toBeLessThan(LISTING_CEILING_BYTES);
    expect(modelFacing).toBeLessThan(MODEL_FACING_CEILING_BYTES);
  });

  it("the core profile lists the core set plus loom_tools within its ceiling", async () => {
    const credential = await h.server.credentials.issue(
      { environmentId: h.server.environmentId, threadId: "thread:size", providerInstanceId: "scripted", providerSessionId: "provider-session:size" },
      { toolProfile: "core" },
    );
    const core = await (await h.connect(credential.token, "core-size")).listTools();
    expect(core.map((tool) => tool.name).sort()).toEqual(
      (Object.keys(TOOL_LISTED_FROM) as (keyof typeof TOOL_LISTED_FROM)[]).filter((name) => TOOL_LISTED_FROM[name] === "core").sort(),
    );
    const modelFacing = core.reduce((sum, tool) => sum + bytes({ name: `mcp__t3-code__${tool.name}`, description: tool.description, input_schema: tool.inputSchema }), 0);
    expect(modelFacing).toBeLessThan(CORE_MODEL_FACING_CEILING_BYTES);
  });

  it("every outputSchema holds the failure envelope exactly once, from the one definition", () => {
    const { $schema: _ignored, ...envelope } = z.toJSONSchema(FailureEnvelopeSchema, { io: "output", unrepresentable: "any" });
    const text = JSON.stringify(envelope);
    for (const tool of tools) {
      // The envelope comes last, after the success shape (or shapes: a dry run's estimate beside the real answer).
      const failure = (tool.outputSchema as unknown as { anyOf: unknown[] }).anyOf.at(-1);
      expect(failure, tool.name).toEqual(envelope);
      expect(JSON.stringify(tool.outputSchema).split(text), tool.name).toHaveLength(2);
    }
  });
});
