import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_LISTED_FROM } from "../../contracts/tools/toolProfiles.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * A core-profile agent (the real Claude Code bundled with the Agent SDK,
 * driven by the scripted model server) reaches a full-profile tool: its
 * model request offers only the core tools and loom_tools, the model finds
 * t3_thread_list through loom_tools and then calls it through loom_tools,
 * and the quoted result is Loom's thread list (docs/mcp.md, "Tool profiles").
 * Success is read from Loom's state and the model server's requests.
 */

const TURN_MS = 90_000;
const PREFIX = "mcp__t3-code__";

let model: ModelServer;
let harness: LoomHarness;

beforeAll(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [{ id: "claude", driver: "claude", toolProfile: "core", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }],
    },
  });
});

afterAll(async () => {
  await harness.close();
  await model.close();
});

describe("claude on a core tool profile", () => {
  it(
    "finds t3_thread_list with loom_tools, calls it through loom_tools and quotes the result",
    async () => {
      model.setRules([
        { when: { toolAvailable: "loom_tools", lastIsToolResult: false }, reply: { toolCall: { tool: "loom_tools", arguments: { query: "list threads" } } }, times: 1 },
        {
          when: { lastIsToolResult: true, anyMessageIncludes: '"name":"t3_thread_list"' },
          reply: { toolCall: { tool: "loom_tools", arguments: { call: { name: "t3_thread_list", arguments: {} } } } },
          times: 1,
        },
        { when: { lastIsToolResult: true }, reply: { text: "threads: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "List the threads.", title: "claude core profile", target: { providerInstanceId: "claude" } });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      const items = harness.items(launched.threadId).filter((item) => item.runId === launched.runId);
      expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");

      // The model was offered exactly the core tools of Loom, loom_tools among them, and not t3_thread_list.
      const offered = model.requests.flatMap((request) => request.normalized?.tools ?? []).filter((name) => name.startsWith(PREFIX));
      const core = Object.entries(TOOL_LISTED_FROM)
        .filter(([, profile]) => profile === "core")
        .map(([name]) => `${PREFIX}${name}`)
        .sort();
      expect([...new Set(offered)].sort()).toEqual(core);

      const calls = items.filter((item) => item.type === "dynamic_tool");
      expect(calls.map((item) => [item.type === "dynamic_tool" ? item.toolName : null, item.status])).toEqual([
        [`${PREFIX}loom_tools`, "completed"],
        [`${PREFIX}loom_tools`, "completed"],
      ]);
      // The search answered t3_thread_list's description and schema; the call answered Loom's thread list, which holds this very thread.
      expect(JSON.stringify(calls[0])).toContain("t3_thread_list");
      expect(JSON.stringify(calls[1])).toContain(launched.threadId);
      const texts = harness.assistantTexts(launched.threadId, launched.runId!);
      expect(texts.at(-1)).toMatch(/^threads: /);
      expect(texts.at(-1)).toContain('"name":"t3_thread_list"');
      expect(texts.at(-1)).toContain(launched.threadId);
    },
    TURN_MS + 30_000,
  );
});
