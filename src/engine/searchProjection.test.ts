import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cmd } from "../core/testing/fixtures.js";
import { TEST_PROVIDERS } from "../core/testing/scenario.js";
import type { SearchChanges, SearchIndex, SearchRequest } from "../store/search/searchIndex.js";
import { parseSearchQuery } from "../store/search/searchQuery.js";
import { SqliteSearchIndex } from "../store/search/sqliteSearchIndex.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { Orchestrator } from "./orchestrator.js";
import { SEARCH_MAPPING_VERSION } from "./searchDocuments.js";
import { SearchProjection } from "./searchProjection.js";

/**
 * The search projection over real SQLite files (the event log and the
 * index): it follows the committed log, keeps its position across restarts,
 * and rebuilds from the log when the index cannot be trusted.
 */

/** An index that counts the documents each apply writes (to see what a restart re-applies). */
class CountingIndex implements SearchIndex {
  readonly backend = "counting";
  applied = 0;
  /** Index transactions (apply calls). */
  writes = 0;
  constructor(private readonly inner: SearchIndex) {}
  checkpoint() {
    return this.inner.checkpoint();
  }
  apply(changes: SearchChanges, through: number) {
    this.applied += changes.documents.length;
    this.writes += 1;
    return this.inner.apply(changes, through);
  }
  reset(version: string) {
    return this.inner.reset(version);
  }
  search(request: SearchRequest) {
    return this.inner.search(request);
  }
  close() {
    return this.inner.close();
  }
}

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-search-projection-"));
  dirs.push(dir);
  return dir;
}

async function boot(dir: string): Promise<{ orchestrator: Orchestrator; projection: SearchProjection; index: CountingIndex }> {
  const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(join(dir, "loom.db")), providers: (id) => TEST_PROVIDERS[id] ?? null });
  const index = new CountingIndex(SqliteSearchIndex.open(join(dir, "search.db")));
  const projection = new SearchProjection(orchestrator, index);
  await projection.start();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await projection.stop();
    await orchestrator.close();
  };
  closers.push(close);
  return { orchestrator, projection, index };
}

async function say(orchestrator: Orchestrator, threadId: string, text: string): Promise<void> {
  if (!orchestrator.state.threads.has(threadId)) {
    await orchestrator.dispatch(cmd("thread.create", { threadId, projectId: "p1", title: threadId, modelSelection: { providerInstanceId: "steerable", model: null } }));
  }
  const receipt = await orchestrator.dispatch(cmd("message.dispatch", { threadId, text, mode: "queue" }));
  expect(receipt.status).toBe("accepted");
}

async function find(projection: SearchProjection, orchestrator: Orchestrator, query: string): Promise<string[]> {
  expect(await projection.waitFor(orchestrator.state.lastSequence, 5_000)).toBe(true);
  const page = await projection.search({ terms: parseSearchQuery(query), projectId: null, threadId: null, kinds: null, includeArchived: false, includeSubagents: true, limit: 50, offset: 0 });
  return page.hits.map((hit) => hit.snippet.replaceAll("**", ""));
}

describe("SearchProjection", () => {
  it("indexes each message as it is committed", async () => {
    const dir = stateDir();
    const first = await boot(dir);
    await say(first.orchestrator, "thread:a", "before the projection knew");
    await say(first.orchestrator, "thread:a", "the blue whale surfaced");
    expect(await find(first.projection, first.orchestrator, "blue whale")).toEqual(["the blue whale surfaced"]);
    expect(first.projection.indexedThrough).toBe(first.orchestrator.state.lastSequence);
  });

  it("picks up where it stopped after a restart, re-indexing nothing already covered", async () => {
    const dir = stateDir();
    const first = await boot(dir);
    await say(first.orchestrator, "thread:a", "an orange lantern");
    await first.projection.waitFor(first.orchestrator.state.lastSequence, 5_000);
    const covered = first.projection.indexedThrough;
    await closers.pop()!();

    const second = await boot(dir);
    expect(second.projection.indexedThrough).toBe(covered);
    expect(second.index.applied).toBe(0);
    await say(second.orchestrator, "thread:a", "a green lantern");
    expect((await find(second.projection, second.orchestrator, "lantern")).sort()).toEqual(["a green lantern", "an orange lantern"]);
    expect(second.index.applied).toBe(1);
  });

  it("rebuilds from the log when the index was built with another mapping, or is ahead of the log", async () => {
    const dir = stateDir();
    const first = await boot(dir);
    await say(first.orchestrator, "thread:a", "a purple kite");
    await first.projection.waitFor(first.orchestrator.state.lastSequence, 5_000);
    await closers.pop()!();

    const stale = SqliteSearchIndex.open(join(dir, "search.db"));
    await stale.reset("0-older-mapping");
    await stale.close();
    const rebuilt = await boot(dir);
    expect(await find(rebuilt.projection, rebuilt.orchestrator, "kite")).toEqual(["a purple kite"]);
    expect(rebuilt.index.applied).toBe(1);
    await closers.pop()!();

    const ahead = SqliteSearchIndex.open(join(dir, "search.db"));
    await ahead.apply({ threads: [], documents: [] }, 1_000_000);
    expect(await ahead.checkpoint()).toEqual({ position: 1_000_000, version: SEARCH_MAPPING_VERSION });
    await ahead.close();
    const again = await boot(dir);
    expect(again.projection.indexedThrough).toBe(again.orchestrator.state.lastSequence);
    expect(await find(again.projection, again.orchestrator, "kite")).toEqual(["a purple kite"]);
  });

  it("gathers a burst of commits into one index write, which a waiting search does not wait out", async () => {
    const dir = stateDir();
    const { orchestrator, projection, index } = await boot(dir);
    const before = index.writes;
    // Three separate commits: each dispatch returns before the next is sent.
    await say(orchestrator, "thread:a", "one red fox");
    await say(orchestrator, "thread:a", "two red foxes");
    await say(orchestrator, "thread:a", "three red foxes");
    expect(projection.indexedThrough).toBeLessThan(orchestrator.state.lastSequence);
    expect((await find(projection, orchestrator, "red")).sort()).toEqual(["one red fox", "three red foxes", "two red foxes"]);
    expect(index.writes - before).toBe(1);
  });

  it("writes what is still gathering when it stops", async () => {
    const dir = stateDir();
    const first = await boot(dir);
    await say(first.orchestrator, "thread:a", "a silver spoon");
    const head = first.orchestrator.state.lastSequence;
    expect(first.projection.indexedThrough).toBeLessThan(head);
    await closers.pop()!();

    const second = await boot(dir);
    expect(second.projection.indexedThrough).toBe(head);
    expect(second.index.applied).toBe(0);
    expect(await find(second.projection, second.orchestrator, "spoon")).toEqual(["a silver spoon"]);
  });

  it("drops a deleted thread's items", async () => {
    const dir = stateDir();
    const { orchestrator, projection } = await boot(dir);
    await say(orchestrator, "thread:gone", "a secret plan");
    await say(orchestrator, "thread:kept", "a public plan");
    expect((await find(projection, orchestrator, "plan")).sort()).toEqual(["a public plan", "a secret plan"]);
    await orchestrator.dispatch(cmd("thread.delete", { threadId: "thread:gone" }));
    expect(await find(projection, orchestrator, "plan")).toEqual(["a public plan"]);
  });
});
