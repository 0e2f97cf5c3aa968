import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomMcpClient } from "../../client/loomMcpClient.js";
import { startLoomServer } from "../../server/loomServer.js";
import { connectAsThread, toolResults } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * t3_thread_search over real MCP: a scripted agent's tool calls, commands,
 * file changes and messages are found by phrase, across a project or within
 * one thread, paged, and still after a restart.
 */

interface Hit {
  threadId: string;
  threadTitle: string;
  runId: string | null;
  itemId: string;
  position: number;
  type: string;
  kind: string;
  snippet: string;
  link: string;
}
interface SearchResult {
  hits: Hit[];
  hasMore: boolean;
  nextOffset: number | null;
  complete: boolean;
  projectId: string | null;
  threadId: string | null;
}

let h: LoomHarness;
let worker: { threadId: string; runId: string };
let elsewhere: { threadId: string; runId: string };

beforeAll(async () => {
  h = await LoomHarness.start({ config: { projects: [{ id: "default", root: "." }, { id: "other", root: "." }] } });
  const thread = await h.createThread({
    title: "Worker",
    prompt: script(
      { call: "t3_thread_list", args: { title: "marmalade sandwich protocol" }, as: "l" },
      { run: "echo the kettle whistles at dawn" },
      { write: { path: "notes/harbour.md", content: "lighthouse keeper log\n" } },
      { say: "All quiet at the lighthouse" },
    ),
  });
  worker = { threadId: thread.threadId, runId: thread.runId! };
  await h.waitForEnd(worker.runId);
  const other = await h.launch({ message: script({ say: "lighthouse in another project" }), projectId: "other", title: "Elsewhere" });
  elsewhere = { threadId: other.threadId, runId: other.runId! };
  await h.waitForEnd(elsewhere.runId);
});
afterAll(async () => {
  await h.close();
});

const search = (args: Record<string, unknown>) => h.owner.ok<SearchResult>("t3_thread_search", args);

describe("t3_thread_search", () => {
  it("finds a phrase from a tool call's arguments, with its thread, run, item position and a snippet", async () => {
    // The prompt that made the call holds the phrase too.
    expect((await search({ query: '"marmalade sandwich protocol"' })).hits.map((hit) => hit.type).sort()).toEqual(["dynamic_tool", "user_message"]);
    const result = await search({ query: '"marmalade sandwich protocol"', kinds: ["tool_call"] });
    expect(result.complete).toBe(true);
    const tool = h.items(worker.threadId).find((item) => item.type === "dynamic_tool")!;
    expect(result.hits).toEqual([
      {
        threadId: worker.threadId,
        threadTitle: "Worker",
        link: expect.stringMatching(/^t3-thread:\/\/v2\//),
        projectId: "default",
        runId: worker.runId,
        itemId: tool.id,
        position: tool.position,
        type: "dynamic_tool",
        kind: "tool_call",
        createdAt: tool.createdAt,
        snippet: expect.stringContaining("**marmalade sandwich protocol**"),
      },
    ]);
  });

  it("finds commands, file changes and messages, and filters by kind", async () => {
    const types = async (args: Record<string, unknown>) => (await search(args)).hits.map((hit) => hit.type).sort();
    // Each also matches the scripted prompt (a user message) that asked for it.
    expect(await types({ query: "kettle whistles" })).toEqual(["command_execution", "user_message"]);
    expect(await types({ query: "kettle whistles", kinds: ["command"] })).toEqual(["command_execution"]);
    expect(await types({ query: "harbour", kinds: ["file_change"] })).toEqual(["file_change"]);
    // A file change is found by its path (the scripted agent reports no diff).
    expect(await types({ query: '"notes harbour md"' })).toEqual(["file_change", "user_message"]);
    expect(await types({ query: "lighthouse", projectId: "default" })).toEqual(["assistant_message", "user_message"]);
    expect(await types({ query: "lighthouse", projectId: "default", kinds: ["message"] })).toEqual(["assistant_message", "user_message"]);
    expect(await types({ query: "lighthouse", kinds: ["command", "file_change"] })).toEqual([]);
  });

  it("searches within one thread, any thread in the environment", async () => {
    const within = await search({ query: "lighthouse", threadId: elsewhere.threadId });
    expect(within.threadId).toBe(elsewhere.threadId);
    expect(new Set(within.hits.map((hit) => hit.threadId))).toEqual(new Set([elsewhere.threadId]));
    // The owner searches every project; projectId narrows it.
    expect(new Set((await search({ query: "lighthouse" })).hits.map((hit) => hit.threadId))).toEqual(new Set([worker.threadId, elsewhere.threadId]));
    expect(new Set((await search({ query: "lighthouse", projectId: "other" })).hits.map((hit) => hit.threadId))).toEqual(new Set([elsewhere.threadId]));
  });

  it("an agent searches its own project unless it names another one", async () => {
    const agent = await h.createThread({
      title: "Searcher",
      prompt: script(
        { call: "t3_thread_search", args: { query: "harbour", kinds: ["file_change"] }, as: "mine" },
        { call: "t3_thread_search", args: { query: "lighthouse", projectId: "other", kinds: ["message"] }, as: "theirs" },
        { say: "{{mine.projectId}}: {{mine.hits.0.threadTitle}}; other: {{theirs.hits.0.threadTitle}}" },
      ),
    });
    await h.waitForEnd(agent.runId!);
    expect(h.assistantTexts(agent.threadId)).toEqual(["default: Worker; other: Elsewhere"]);
    const [mine] = toolResults<SearchResult>(h, agent.threadId, "t3_thread_search");
    expect(mine!.result.hits.every((hit) => hit.threadId !== undefined && hit.threadTitle === "Worker")).toBe(true);
  });

  it("pages with offset and nextOffset, bounded", async () => {
    const paged = await h.createThread({ title: "Echoes", prompt: script(...Array.from({ length: 5 }, (_, i) => ({ say: `echo chamber ${i}` }))) });
    await h.waitForEnd(paged.runId!);
    const seen: string[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: SearchResult = await search({ query: "chamber", threadId: paged.threadId, limit: 2, offset });
      expect(page.hits.length).toBeLessThanOrEqual(2);
      seen.push(...page.hits.map((hit) => hit.itemId));
      offset = page.nextOffset;
    }
    expect(seen).toHaveLength(6); // the prompt and the five messages
    expect(new Set(seen).size).toBe(6);
    const tooFar = await h.owner.call("t3_thread_search", { query: "chamber", offset: 1_001 });
    expect(tooFar.errorCode).toBe("invalid_request");
  });

  it("answers typed failures: a query with no words, an unknown thread, both scopes at once", async () => {
    expect((await h.owner.call("t3_thread_search", { query: '"" ** -- ?' })).errorCode).toBe("invalid_request");
    expect((await h.owner.call("t3_thread_search", { query: "x", threadId: "thread:nope" })).errorCode).toBe("thread_not_found");
    expect((await h.owner.call("t3_thread_search", { query: "x", threadId: worker.threadId, projectId: "default" })).errorCode).toBe("invalid_request");
  });

  it("leaves a deleted thread's items out", async () => {
    const doomed = await h.createThread({ title: "Doomed", prompt: script({ say: "quicksilver lagoon" }) });
    await h.waitForEnd(doomed.runId!);
    expect((await search({ query: "quicksilver" })).hits).toHaveLength(2);
    expect((await h.dispatch("thread.delete", { threadId: doomed.threadId })).status).toBe(200);
    expect((await search({ query: "quicksilver" })).hits).toEqual([]);
  });

  it("an agent without a live run may still search (searching changes nothing)", async () => {
    const idle = await connectAsThread(h, worker.threadId, "scripted");
    const found = await idle.ok<SearchResult>("t3_thread_search", { query: "kettle" });
    expect(new Set(found.hits.map((hit) => hit.threadId))).toEqual(new Set([worker.threadId]));
  });
});

describe("t3_thread_search after a restart", () => {
  it("the index survives: the same hits, complete, without rebuilding", async () => {
    const before = await search({ query: "marmalade" });
    const stateDir = h.server.stateDir.root;
    const indexed = h.server.search.indexedThrough;
    await h.server.close();
    const logs: string[] = [];
    const server = await startLoomServer({ stateDir, cwd: h.dir, configPath: join(h.dir, "loom-config.json"), log: (line) => logs.push(line) });
    try {
      const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim());
      const after = await client.ok<SearchResult>("t3_thread_search", { query: "marmalade" });
      expect(after.hits).toEqual(before.hits);
      expect(after.complete).toBe(true);
      // It resumed from its stored position rather than replaying the log into an empty index.
      expect(server.search.indexedThrough).toBeGreaterThanOrEqual(indexed);
      expect(logs.filter((line) => line.includes("rebuilding the search index"))).toEqual([]);
      await client.close();
    } finally {
      await server.close();
    }
  });
});
