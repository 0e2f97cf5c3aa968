import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ThreadReadOutput } from "../../contracts/tools/threadTools.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { pollUntil } from "../../testkit/poll.js";

/**
 * The real Claude Code (bundled with the Agent SDK) holding a thread's output
 * schema natively (docs/delegation.md, "Structured results"): Loom starts it
 * with `outputFormat`, the scripted model answers through Claude Code's
 * StructuredOutput tool, and the checked value is the thread's
 * structuredResult. A follow-up that owes no structured result restarts
 * Claude Code without the schema and continues the same conversation.
 */

const TURN_MS = 90_000;
const VERDICT = { type: "object", properties: { winner: { type: "integer" }, rationale: { type: "string" } }, required: ["winner", "rationale"], additionalProperties: false };

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: { providers: [{ id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }] },
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

describe("claude: output schemas held by Claude Code", () => {
  it(
    "a structured thread answers through StructuredOutput; its follow-up continues the conversation without the schema",
    async () => {
      model.setRules([
        { when: { toolAvailable: "StructuredOutput", lastIsToolResult: false }, reply: { toolCall: { tool: "StructuredOutput", arguments: { winner: 2, rationale: "shorter" } } } },
        // Claude Code sends the follow-up in the user turn that carries the StructuredOutput tool's result.
        { when: { anyMessageIncludes: "And why?" }, reply: { text: "Because it is shorter." } },
      ]);
      const launched = await harness.launch({ message: "Pick the better attempt.", title: "claude schema", target: { providerInstanceId: "claude" }, outputSchema: VERDICT });
      const first = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(first.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");

      const read = await pollUntil(
        () => harness.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId: launched.threadId }),
        (r) => r.structuredResult !== undefined || r.structuredResultError != null,
        "the structured result",
      );
      expect(read.structuredResult).toEqual({ winner: 2, rationale: "shorter" });
      // Claude Code checked the value itself: one model request, one run, no repair turn.
      const schemaRequests = model.requests.filter((request) => request.normalized?.tools.includes("StructuredOutput"));
      expect(schemaRequests).toHaveLength(1);
      expect(harness.runs(launched.threadId)).toHaveLength(1);
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe('{"winner":2,"rationale":"shorter"}');

      const sent = await harness.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "And why?" });
      const second = await harness.waitForEnd(sent.runId, TURN_MS);
      expect(second.status).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, sent.runId).at(-1)).toBe("Because it is shorter.");
      const followUp = model.requests.at(-1)!.normalized!;
      // Restarted without the schema, on the saved session: the earlier turn is in the conversation.
      expect(followUp.tools).not.toContain("StructuredOutput");
      expect(followUp.messages.some((message) => message.text.includes("Pick the better attempt."))).toBe(true);
      expect(followUp.messages.some((message) => message.toolCalls.some((call) => call.name === "StructuredOutput"))).toBe(true);
    },
    TURN_MS * 3,
  );
});
