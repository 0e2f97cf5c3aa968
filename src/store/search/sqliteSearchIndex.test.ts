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

  it("refuses calls once closed", async () => {
    const index = SqliteSearchIndex.open(":memory:");
    await index.close();
    await expect(index.checkpoint()).rejects.toThrow(/closed/);
  });
});
