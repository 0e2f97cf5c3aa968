import { afterEach, describe, expect, it } from "vitest";
import type { SearchDocument, SearchIndex, SearchRequest, SearchThread } from "./searchIndex.js";
import { parseSearchQuery } from "./searchQuery.js";

/**
 * The contract every search index backend passes (STYLE rule 3): the same
 * cases on SQLite FTS5 and PostgreSQL. `fresh` gives an empty index and a
 * way to open the same storage again (a restart).
 */
export interface SearchIndexFixture {
  readonly index: SearchIndex;
  reopen(): Promise<SearchIndex>;
}

const thread = (id: string, overrides: Partial<SearchThread> = {}): SearchThread => ({
  threadId: id,
  projectId: "p1",
  title: `Thread ${id}`,
  relation: "root",
  archived: false,
  deleted: false,
  ...overrides,
});

let position = 0;
const doc = (itemId: string, threadId: string, text: string, overrides: Partial<SearchDocument> = {}): SearchDocument => ({
  itemId,
  threadId,
  runId: `run:${threadId}`,
  position: position++,
  itemType: "assistant_message",
  kind: "message",
  createdAt: "2026-03-01T12:00:00.000Z",
  text,
  ...overrides,
});

function request(query: string, overrides: Partial<SearchRequest> = {}): SearchRequest {
  return { terms: parseSearchQuery(query), projectId: null, threadId: null, kinds: null, includeArchived: false, includeSubagents: true, limit: 20, offset: 0, ...overrides };
}

async function ids(index: SearchIndex, query: string, overrides: Partial<SearchRequest> = {}): Promise<string[]> {
  return (await index.search(request(query, overrides))).hits.map((hit) => hit.itemId);
}

export function searchIndexContract(name: string, fresh: () => Promise<SearchIndexFixture>): void {
  describe(`search index contract: ${name}`, () => {
    const open: SearchIndex[] = [];
    async function start(): Promise<SearchIndexFixture> {
      const fixture = await fresh();
      open.push(fixture.index);
      return {
        index: fixture.index,
        reopen: async () => {
          const again = await fixture.reopen();
          open.push(again);
          return again;
        },
      };
    }
    afterEach(async () => {
      for (const index of open.splice(0)) await index.close();
    });

    it("starts empty at position 0 with no version; reset records the version", async () => {
      const { index } = await start();
      expect(await index.checkpoint()).toEqual({ position: 0, version: null });
      await index.reset("v1");
      expect(await index.checkpoint()).toEqual({ position: 0, version: "v1" });
    });

    it("applies a batch with its position in one step, and finds words in any order, phrases in order", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply(
        {
          threads: [thread("t1")],
          documents: [doc("a", "t1", "The deploy token expired yesterday"), doc("b", "t1", "token deploy checklist"), doc("c", "t1", "nothing relevant here")],
        },
        7,
      );
      expect((await index.checkpoint()).position).toBe(7);
      expect((await ids(index, "deploy token")).sort()).toEqual(["a", "b"]);
      expect(await ids(index, '"deploy token"')).toEqual(["a"]);
      expect(await ids(index, "DEPLOY Expired")).toEqual(["a"]);
      expect(await ids(index, "deploy missing")).toEqual([]);
      expect((await ids(index, "check*")).sort()).toEqual(["b"]);
      expect((await ids(index, '"token exp*"')).sort()).toEqual(["a"]);
    });

    it("answers hits with their thread, run, item position and a snippet that marks the match", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply({ threads: [thread("t1", { title: "Release" })], documents: [doc("a", "t1", "first we build, then we ship the release to staging", { position: 42, kind: "tool_call", itemType: "dynamic_tool" })] }, 1);
      const page = await index.search(request("ship"));
      expect(page.hasMore).toBe(false);
      expect(page.hits.map(({ snippet: _snippet, ...hit }) => hit)).toEqual([
        {
          itemId: "a",
          threadId: "t1",
          threadTitle: "Release",
          projectId: "p1",
          runId: "run:t1",
          position: 42,
          itemType: "dynamic_tool",
          kind: "tool_call",
          createdAt: "2026-03-01T12:00:00.000Z",
        },
      ]);
      expect(page.hits[0]!.snippet).toContain("**ship**");
    });

    it("a later version of an item replaces it", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply({ threads: [thread("t1")], documents: [doc("a", "t1", "running the migration")] }, 1);
      await index.apply({ threads: [], documents: [doc("a", "t1", "migration finished", { position: 3 })] }, 2);
      expect(await ids(index, "running")).toEqual([]);
      expect((await index.search(request("finished"))).hits.map((hit) => [hit.itemId, hit.position])).toEqual([["a", 3]]);
      // The same item twice in one batch: the last version wins.
      await index.apply({ threads: [], documents: [doc("b", "t1", "draft one"), doc("b", "t1", "draft two")] }, 3);
      expect(await ids(index, "one")).toEqual([]);
      expect(await ids(index, "two")).toEqual(["b"]);
    });

    it("filters by project, thread, kind, archived and sub-agent threads", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply(
        {
          threads: [thread("t1"), thread("t2", { projectId: "p2" }), thread("t3", { archived: true }), thread("t4", { relation: "subagent" })],
          documents: [
            doc("m1", "t1", "alpha in a message"),
            doc("c1", "t1", "$ echo alpha", { kind: "command", itemType: "command_execution" }),
            doc("m2", "t2", "alpha elsewhere"),
            doc("m3", "t3", "alpha archived"),
            doc("m4", "t4", "alpha in a child"),
          ],
        },
        1,
      );
      expect((await ids(index, "alpha")).sort()).toEqual(["c1", "m1", "m2", "m4"]);
      expect((await ids(index, "alpha", { projectId: "p1" })).sort()).toEqual(["c1", "m1", "m4"]);
      expect((await ids(index, "alpha", { threadId: "t1" })).sort()).toEqual(["c1", "m1"]);
      expect(await ids(index, "alpha", { threadId: "t1", kinds: ["command"] })).toEqual(["c1"]);
      expect((await ids(index, "alpha", { includeArchived: true })).sort()).toEqual(["c1", "m1", "m2", "m3", "m4"]);
      expect((await ids(index, "alpha", { includeSubagents: false })).sort()).toEqual(["c1", "m1", "m2"]);
      // A thread's later record moves it: filters read the latest.
      await index.apply({ threads: [thread("t2", { projectId: "p1", title: "Moved" })], documents: [] }, 2);
      expect((await ids(index, "alpha", { projectId: "p1" })).sort()).toEqual(["c1", "m1", "m2", "m4"]);
    });

    it("a deleted thread's documents leave the index, and later ones of it stay out", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply({ threads: [thread("t1"), thread("t2")], documents: [doc("a", "t1", "gamma one"), doc("b", "t2", "gamma two")] }, 1);
      await index.apply({ threads: [thread("t1", { deleted: true })], documents: [doc("c", "t1", "gamma three")] }, 2);
      expect(await ids(index, "gamma")).toEqual(["b"]);
      expect(await ids(index, "gamma", { threadId: "t1" })).toEqual([]);
    });

    it("pages through equally ranked hits newest first, without repeats", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply({ threads: [thread("t1")], documents: ["d1", "d2", "d3", "d4", "d5"].map((id) => doc(id, "t1", "same words here")) }, 1);
      const first = await index.search(request("words", { limit: 2 }));
      const second = await index.search(request("words", { limit: 2, offset: 2 }));
      const third = await index.search(request("words", { limit: 2, offset: 4 }));
      expect([first.hasMore, second.hasMore, third.hasMore]).toEqual([true, true, false]);
      expect([...first.hits, ...second.hits, ...third.hits].map((hit) => hit.itemId)).toEqual(["d5", "d4", "d3", "d2", "d1"]);
    });

    it("ranks an item that matches more closely first", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply(
        { threads: [thread("t1")], documents: [doc("weak", "t1", `kappa ${"filler words that say nothing ".repeat(20)}`), doc("strong", "t1", "kappa kappa kappa"), doc("later", "t1", "unrelated")] },
        1,
      );
      expect(await ids(index, "kappa")).toEqual(["strong", "weak"]);
    });

    it("keeps documents and position across a reopen; reset empties it", async () => {
      const fixture = await start();
      await fixture.index.reset("v1");
      await fixture.index.apply({ threads: [thread("t1")], documents: [doc("a", "t1", "durable words")] }, 9);
      await fixture.index.close();
      const again = await fixture.reopen();
      expect(await again.checkpoint()).toEqual({ position: 9, version: "v1" });
      expect(await ids(again, "durable")).toEqual(["a"]);
      await again.reset("v2");
      expect(await again.checkpoint()).toEqual({ position: 0, version: "v2" });
      expect(await ids(again, "durable")).toEqual([]);
    });

    it("treats query text as words only: quotes, operators and punctuation are never syntax", async () => {
      const { index } = await start();
      await index.reset("v1");
      await index.apply({ threads: [thread("t1")], documents: [doc("a", "t1", 'say "hello" OR NOT (world) AND near: x-y')] }, 1);
      for (const query of ['"hello', "hello OR", "NOT world", "(world)", "near:", "x-y", "hello)*", '""" hello']) {
        expect(await ids(index, query), query).toEqual(["a"]);
      }
    });
  });
}
