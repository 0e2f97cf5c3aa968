import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseSearchQuery } from "./searchQuery.js";
import { SqliteSearchIndex } from "./sqliteSearchIndex.js";
import { searchIndexContract } from "./testSuiteSearchIndex.js";

const dir = mkdtempSync(join(tmpdir(), "loom-search-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

searchIndexContract("SQLite FTS5", () => {
  const file = join(dir, `search-${++files}.db`);
  return Promise.resolve({ index: SqliteSearchIndex.open(file), reopen: () => Promise.resolve(SqliteSearchIndex.open(file)) });
});

describe("SQLite FTS5 search index", () => {
  it("ignores accents (unicode61 remove_diacritics)", async () => {
    const index = SqliteSearchIndex.open(":memory:");
    await index.reset("v1");
    await index.apply({ threads: [{ threadId: "t", projectId: "p", title: "T", relation: "root", archived: false, deleted: false }], documents: [{ itemId: "a", threadId: "t", runId: null, position: 0, itemType: "user_message", kind: "message", createdAt: "2026-03-01T12:00:00.000Z", text: "Crème brûlée au café" }] }, 1);
    const page = await index.search({ terms: parseSearchQuery("creme brulee cafe"), projectId: null, threadId: null, kinds: null, includeArchived: false, includeSubagents: true, limit: 5, offset: 0 });
    expect(page.hits.map((hit) => hit.itemId)).toEqual(["a"]);
    await index.close();
  });

  it("finds the matches a filter keeps behind many better-ranked matches it drops, page by page", async () => {
    const index = SqliteSearchIndex.open(":memory:");
    await index.reset("v1");
    const threads = [
      { threadId: "loud", projectId: "other", title: "Loud", relation: "root" as const, archived: false, deleted: false },
      { threadId: "quiet", projectId: "mine", title: "Quiet", relation: "root" as const, archived: false, deleted: false },
    ];
    const doc = (itemId: string, threadId: string, position: number, text: string) => ({ itemId, threadId, runId: null, position, itemType: "user_message", kind: "message" as const, createdAt: "2026-03-01T12:00:00.000Z", text });
    // 500 short (better-ranked) matches in another project, 5 long ones in this project.
    const documents = [
      ...Array.from({ length: 500 }, (_, n) => doc(`loud-${n}`, "loud", n, "needle")),
      ...Array.from({ length: 5 }, (_, n) => doc(`quiet-${n}`, "quiet", n, `needle ${"hay ".repeat(40)}`)),
    ];
    await index.apply({ threads, documents }, 1);
    const request = { terms: parseSearchQuery("needle"), projectId: "mine", threadId: null, kinds: null, includeArchived: false, includeSubagents: true };
    const first = await index.search({ ...request, limit: 3, offset: 0 });
    const second = await index.search({ ...request, limit: 3, offset: 3 });
    expect(first.hasMore).toBe(true);
    expect(second.hasMore).toBe(false);
    expect([...first.hits, ...second.hits].map((hit) => hit.itemId).sort()).toEqual(["quiet-0", "quiet-1", "quiet-2", "quiet-3", "quiet-4"]);
    const everywhere = await index.search({ ...request, projectId: null, limit: 20, offset: 0 });
    expect(everywhere.hits.every((hit) => hit.threadId === "loud")).toBe(true);
    await index.close();
  });

  it("refuses calls once closed", async () => {
    const index = SqliteSearchIndex.open(":memory:");
    await index.close();
    await expect(index.checkpoint()).rejects.toThrow(/closed/);
  });
});
