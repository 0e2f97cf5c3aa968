import { FileWebhookKeyStore } from "../src/app/schedules/webhookKeys.js";
import { MemoryWebhookDeliveries } from "../src/store/webhookDeliveries/memoryWebhookDeliveries.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ownerCaller } from "../src/app/caller.js";
import type { AppContext } from "../src/app/context.js";
import { searchThreads } from "../src/app/search/threadSearch.js";
import { TitleRegenerations } from "../src/app/threads/titleRegeneration.js";
import { DEFAULT_TITLES } from "../src/config/config.js";
import type { AppThread } from "../src/contracts/thread.js";
import type { TurnItem } from "../src/contracts/turnItems.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { SearchProjection } from "../src/engine/searchProjection.js";
import { ProviderRegistry } from "../src/providers/registry.js";
import { SecretVault } from "../src/providers/secretVault.js";
import type { CommitEntry } from "../src/store/eventStore.js";
import { SNIPPET_CLOSE, SNIPPET_OPEN } from "../src/store/search/searchIndex.js";
import { parseSearchQuery, toFts5Match } from "../src/store/search/searchQuery.js";
import { SqliteSearchIndex } from "../src/store/search/sqliteSearchIndex.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { fmt, now, percentile, printTable, rate, seconds } from "./stats.js";

/**
 * t3_thread_search over a log of N indexed timeline items (messages, tool
 * calls, commands) against a plain FTS5 query on the same table in the same
 * run: `SELECT rowid, snippet(...) FROM search_text WHERE search_text MATCH ?
 * ORDER BY rank LIMIT 20` on its own connection. The measured side is the
 * app function every transport calls (searchThreads: parse, wait for the
 * index, scope to the project, join the thread records, shape the hits).
 * Also reports how fast the projection builds the index from the log.
 */
const ITEMS_PER_THREAD = 100;
const BLOCK = 50;
const AT = "2026-01-01T00:00:00.000Z";

/** A deterministic vocabulary with a skewed (Zipf-like) word frequency. */
const VOCABULARY = Array.from({ length: 4_000 }, (_, i) => `w${i.toString(36)}${"aeiou"[i % 5]}x`);
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seededRandom(42);
const word = () => VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]!;
const sentence = (words: number) => Array.from({ length: words }, word).join(" ");

function threadRecord(id: string): AppThread {
  return {
    id, projectId: "bench", title: `Thread ${id}`, titleRegenerating: false, providerInstanceId: null, modelSelection: null,
    runtimeMode: "full-access", interactionMode: "default", worktreePath: null, branch: null, pullRequests: [],
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" }, queuedRuns: [],
    createdBy: "user", creationSource: "api", createdAt: AT, updatedAt: AT, archivedAt: null, deletedAt: null,
    settledAt: null, autoSettle: true, snoozedUntil: null, snoozedAt: null, pinnedRank: null, activeRank: null,
    lastVisitedAt: null, markedUnreadAt: null, pendingBackgroundTasks: [],
  };
}

/** One timeline item: three in five are messages, the rest tool calls and commands. */
function item(threadId: string, position: number): TurnItem {
  const base = { id: `turn-item:${threadId}:${position}`, threadId, runId: `run:${threadId}`, position, createdAt: AT, updatedAt: AT };
  switch (position % 5) {
    case 0:
      return { ...base, type: "user_message", messageId: `message:${threadId}:${position}`, text: sentence(25), createdBy: "user", creationSource: "api" };
    case 1:
    case 2:
      return { ...base, type: "assistant_message", messageId: `message:${threadId}:${position}`, text: sentence(40), streaming: false, createdBy: "agent", creationSource: "provider" };
    case 3:
      return { ...base, type: "dynamic_tool", toolName: "t3_thread_list", arguments: { title: sentence(4) }, result: { structuredContent: { note: sentence(20) } }, status: "completed" };
    default:
      return { ...base, type: "command_execution", command: `grep -r ${word()} src`, cwd: "/repo", status: "completed", exitCode: 0, durationMs: 12, outputPreview: sentence(20), outputTruncated: false, outputStreamId: null };
  }
}

async function fillLog(store: SqliteEventStore, items: number): Promise<void> {
  const threads = Math.ceil(items / ITEMS_PER_THREAD);
  for (let t = 0; t < threads; t++) {
    const threadId = `thread:search-${t}`;
    const events = [{ type: "thread.created", streamId: threadId, data: { thread: threadRecord(threadId) } }];
    for (let p = 0; p < ITEMS_PER_THREAD && t * ITEMS_PER_THREAD + p < items; p++) events.push({ type: "turn-item.updated", streamId: threadId, data: { item: item(threadId, p) } } as never);
    const entry: CommitEntry = { receipt: { status: "accepted", commandId: `cmd:fill:${t}`, commandType: "bench.fill", acceptedAt: AT }, events, outbox: [] };
    await store.commit([entry]);
  }
}

interface Latencies {
  readonly samples: number[];
}

function time(into: Latencies, run: () => unknown): void {
  const start = now();
  run();
  into.samples.push(Number(now() - start) / 1e6);
}

async function timeAsync(into: Latencies, run: () => Promise<unknown>): Promise<void> {
  const start = now();
  await run();
  into.samples.push(Number(now() - start) / 1e6);
}

export async function runSearchBench(options: { items: number; calls: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-search-"));
  try {
    const store = SqliteEventStore.open(join(dir, "loom.db"));
    await fillLog(store, options.items);
    const orchestrator = await Orchestrator.open({ store });
    const projection = new SearchProjection(orchestrator, SqliteSearchIndex.open(join(dir, "search.db")));
    const buildStart = now();
    await projection.start();
    const buildSeconds = seconds(buildStart);
    const ctx: AppContext = {
      orchestrator,
      registry: new ProviderRegistry([], new Map()),
      environmentId: "env:bench",
      projects: [{ id: "bench", root: dir, name: "bench" }],
      scratchRoot: join(dir, "scratch"),
      maxWaitMs: 30_000,
      progressIntervalMs: 5_000,
      clock: Date.now,
      nodeId: "node:bench",
      search: projection,
      secrets: { vault: new SecretVault(), isSessionLive: () => false },
      titles: new TitleRegenerations(DEFAULT_TITLES),
      workspaces: { worktreesRoot: join(dir, "worktrees"), branchPrefix: "loom/", fallbackRoot: dir, setupRunDir: join(dir, "run") },
      schedules: { keys: new FileWebhookKeyStore(join(dir, "webhook-keys.json")), baseUrl: () => "http://127.0.0.1", minIntervalMs: 60_000, timeZone: "UTC", webhookMaxBodyBytes: 1024 * 1024, deliveries: new MemoryWebhookDeliveries(), webhookToleranceMs: 5 * 60_000 },
    };
    const owner = ownerCaller("env:bench");
    const raw = new Database(join(dir, "search.db"), { readonly: true });
    const plain = raw.prepare(`SELECT rowid, snippet(search_text, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '…', 16) FROM search_text WHERE search_text MATCH ? ORDER BY rank LIMIT 20`);

    // A common word, a rare one, a two-word phrase and a prefix: what agents type.
    const queries = [VOCABULARY[3]!, VOCABULARY[1_500]!, `"${VOCABULARY[2]!} ${VOCABULARY[5]!}"`, `${VOCABULARY[7]!.slice(0, 3)}*`];
    const rows: string[][] = [["query", "matches", "plain FTS5 p50 ms", "t3_thread_search p50 ms", "p99 ms", "p50 ratio"]];
    const ratios: number[] = [];
    for (const query of queries) {
      const match = toFts5Match(parseSearchQuery(query));
      const matches = (raw.prepare("SELECT count(*) FROM search_text WHERE search_text MATCH ?").pluck().get(match) as number) ?? 0;
      const baseline: Latencies = { samples: [] };
      const measured: Latencies = { samples: [] };
      const app = () => searchThreads(ctx, owner, { query, projectId: "bench" });
      for (let i = 0; i < 10; i++) {
        plain.all(match);
        await app();
      }
      for (let done = 0; done < options.calls; done += BLOCK) {
        for (let i = 0; i < BLOCK; i++) time(baseline, () => plain.all(match));
        for (let i = 0; i < BLOCK; i++) await timeAsync(measured, app);
      }
      const sortedBase = [...baseline.samples].sort((a, b) => a - b);
      const sorted = [...measured.samples].sort((a, b) => a - b);
      const ratio = percentile(sorted, 50) / percentile(sortedBase, 50);
      ratios.push(ratio);
      rows.push([query, fmt(matches), percentile(sortedBase, 50).toFixed(3), percentile(sorted, 50).toFixed(3), percentile(sorted, 99).toFixed(3), ratio.toFixed(2)]);
    }
    printTable(`t3_thread_search over ${fmt(options.items)} indexed items (${options.calls} calls per query, goal: p50 ratio <= 2)`, rows);
    printTable("search index built from the log", [
      ["measure", "items per second"],
      [`projection rebuild of ${fmt(options.items)} items`, fmt(rate(options.items, buildSeconds))],
    ]);
    raw.close();
    await projection.stop();
    await orchestrator.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
