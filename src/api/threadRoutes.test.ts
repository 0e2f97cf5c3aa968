import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoomHttpClient } from "../client/loomHttpClient.js";
import { WireError } from "../client/wireErrors.js";
import type { TurnItem } from "../contracts/turnItems.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { httpClient } from "../testkit/wireClients.js";

/**
 * The HTTP snapshot endpoints (spec 004 §3.3) on a large real thread: the
 * limits of the bounded snapshot and history pages, paging the whole
 * timeline back with no gap or repeat, the full projection and transcript,
 * compaction through the typed client, omitIdleSubagents, and typed failures.
 */

let h: LoomHarness;
let http: LoomHttpClient;
let threadId: string;
let timeline: TurnItem[];

/** Turns of 200 answers each, so the thread has far more items than the largest page. */
const ANSWERS_PER_TURN = 200;
const TURNS = 3;

beforeAll(async () => {
  h = await LoomHarness.start();
  http = httpClient(h);
  const created = await h.createThread({ title: "a long thread", prompt: script(...Array.from({ length: ANSWERS_PER_TURN }, (_, n) => ({ say: `turn 0 answer ${n}` }))) });
  threadId = created.threadId;
  await h.waitForEnd(created.runId!, 60_000);
  for (let turn = 1; turn < TURNS; turn++) {
    await h.owner.ok("t3_thread_send", { threadId, message: script(...Array.from({ length: ANSWERS_PER_TURN }, (_, n) => ({ say: `turn ${turn} answer ${n}` }))) });
    await h.until(() => h.runs(threadId).length === turn + 1 && h.runs(threadId).at(-1)!.endedAt !== null, `turn ${turn} to end`, 60_000);
  }
  timeline = h.items(threadId);
}, 120_000);

afterAll(async () => {
  await h.close();
});

async function status(path: string, token: string | null = h.ownerToken): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const res = await fetch(`${h.server.url}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

const ids = (items: readonly TurnItem[]): string[] => items.map((item) => item.id);
const base = () => `/api/orchestration/threads/${encodeURIComponent(threadId)}`;

describe("bounded snapshot", () => {
  it("answers the newest 100 items by default, oldest first, with what they need and a history cursor", async () => {
    expect(timeline.length).toBe(TURNS * (ANSWERS_PER_TURN + 1));
    const snapshot = await http.boundedSnapshot(threadId);
    expect(ids(snapshot.items)).toEqual(ids(timeline.slice(-100)));
    expect(snapshot.snapshotSequence).toBe(h.state.lastSequence);
    expect(snapshot.thread.id).toBe(threadId);
    // Only the run its items belong to (every run has ended).
    expect(snapshot.runs.map((run) => run.id)).toEqual([h.runs(threadId).at(-1)!.id]);
    expect(snapshot.historyCursor).not.toBeNull();
  });

  it("takes a limit up to 500; a larger, zero or malformed one is a 400 invalid_request", async () => {
    const largest = await http.boundedSnapshot(threadId, { limit: 500 });
    expect(ids(largest.items)).toEqual(ids(timeline.slice(-500)));
    for (const limit of ["501", "0", "ten", "-1", "1.5"]) {
      const answer = await status(`${base()}/bounded-snapshot?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error?.code).toBe("invalid_request");
    }
  });

  it("a thread with few items has no history cursor", async () => {
    const created = await h.createThread({ prompt: "short" });
    await h.waitForEnd(created.runId!);
    const snapshot = await http.boundedSnapshot(created.threadId);
    expect(snapshot.items.map((item) => item.type)).toEqual(["user_message", "assistant_message"]);
    expect(snapshot.historyCursor).toBeNull();
  });
});

describe("history pages", () => {
  it("page back from the snapshot's cursor to the first item: together they are the whole timeline, once each", async () => {
    const snapshot = await http.boundedSnapshot(threadId);
    const pages: TurnItem[][] = [];
    let cursor = snapshot.historyCursor;
    while (cursor !== null) {
      const page = await http.historyPage(threadId, { cursor, ...(pages.length % 2 === 0 ? {} : { limit: 200 }) });
      expect(page.items.length).toBe(pages.length % 2 === 0 ? Math.min(50, timeline.length - 100 - pages.flat().length) : Math.min(200, timeline.length - 100 - pages.flat().length));
      pages.push([...page.items]);
      cursor = page.nextCursor;
    }
    const all = [...pages.reverse().flat(), ...snapshot.items];
    expect(ids(all)).toEqual(ids(timeline));
  });

  it("without a cursor the page is the newest items; the limit is at most 200", async () => {
    const page = await http.historyPage(threadId);
    expect(ids(page.items)).toEqual(ids(timeline.slice(-50)));
    expect((await status(`${base()}/history-page?limit=201`)).status).toBe(400);
  });

  it("refuses a cursor that is not a cursor, or another thread's", async () => {
    const garbage = await status(`${base()}/history-page?cursor=not-a-cursor`);
    expect(garbage).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    const other = await h.createThread({ prompt: script(...Array.from({ length: 120 }, (_, n) => ({ say: `other ${n}` }))) });
    await h.waitForEnd(other.runId!, 30_000);
    const foreign = (await http.boundedSnapshot(other.threadId)).historyCursor!;
    const mixed = await status(`${base()}/history-page?cursor=${encodeURIComponent(foreign)}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error?.message).toContain("belongs to another thread");
  });
});

describe("whole projection and transcript", () => {
  it("the snapshot endpoint answers the whole projection: thread, runs, attempts, items", async () => {
    const projection = await http.threadSnapshot(threadId);
    expect(ids(projection.items)).toEqual(ids(timeline));
    expect(projection.runs.map((run) => run.id)).toEqual(h.runs(threadId).map((run) => run.id));
    expect(projection.attempts).toHaveLength(TURNS);
  });

  it("the transcript is the conversation only, oldest first", async () => {
    const transcript = await http.transcript(threadId);
    expect(transcript.entries).toHaveLength(timeline.length);
    expect(transcript.entries.filter((entry) => entry.role === "user")).toHaveLength(TURNS);
    expect(transcript.entries[1]).toMatchObject({ role: "assistant", text: "turn 0 answer 0" });
  });
});

describe("compaction through the typed client", () => {
  it("every endpoint's compacted answer expands to the raw one, and is smaller on the wire", async () => {
    const raw = await http.boundedSnapshot(threadId, { limit: 500 });
    const compact = await http.boundedSnapshot(threadId, { limit: 500, compactIds: true, dedupeBodies: true });
    expect(compact).toEqual(raw);
    const rawText = await http.getText(`${base()}/bounded-snapshot`, { limit: 500 });
    const compactText = await http.getText(`${base()}/bounded-snapshot`, { limit: 500, compactIds: true, dedupeBodies: true });
    expect(compactText.length).toBeLessThan(rawText.length);
    expect(await http.threadSnapshot(threadId, { compactIds: true, dedupeBodies: true })).toEqual(await http.threadSnapshot(threadId));
    expect(await http.transcript(threadId, { compactIds: true })).toEqual(await http.transcript(threadId));
    const page = (await http.boundedSnapshot(threadId)).historyCursor!;
    expect(await http.historyPage(threadId, { cursor: page, compactIds: true })).toEqual(await http.historyPage(threadId, { cursor: page }));
  });
});

describe("shell snapshot", () => {
  it("omitIdleSubagents=1 leaves out subagent threads with no run in flight", async () => {
    const parent = await h.createThread({ prompt: script({ call: "delegate_task", args: { task: "idle soon", title: "idle child" }, as: "d" }, { say: "ok" }) });
    await h.waitForEnd(parent.runId!);
    const child = await h.until(() => [...h.state.threads.values()].find((t) => t.lineage.parentThreadId === parent.threadId), "the child thread");
    await h.until(() => h.runs(child.id).at(-1)?.endedAt, "the child's run to end");
    const rows = async (omit: boolean) => (await http.shellSnapshot({ omitIdleSubagents: omit })).threads.map((row) => row.id);
    expect(await rows(false)).toContain(child.id);
    expect(await rows(true)).not.toContain(child.id);
    expect(await rows(true)).toContain(parent.threadId);
  });
});

describe("failures", () => {
  it("an unknown thread is 404 thread_not_found on every endpoint; no token is 401", async () => {
    for (const endpoint of ["snapshot", "transcript", "bounded-snapshot", "history-page"]) {
      const answer = await status(`/api/orchestration/threads/thread%3Anope/${endpoint}`);
      expect(answer).toMatchObject({ status: 404, body: { error: { code: "thread_not_found" } } });
      expect((await status(`${base()}/${endpoint}`, null)).status).toBe(401);
    }
    const error = await http.boundedSnapshot("thread:nope").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WireError);
    expect((error as WireError).code).toBe("thread_not_found");
  });
});
