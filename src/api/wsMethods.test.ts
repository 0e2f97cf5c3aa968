import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoomWsClient } from "../client/loomWsClient.js";
import { WireError } from "../client/wireErrors.js";
import { WS_METHODS, type WsRequestMethod } from "../contracts/wire/methods.js";
import type { ThreadStreamUpdate } from "../contracts/wire/projections.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { RecordedStream, wsClient } from "../testkit/wireClients.js";

/**
 * Every WebSocket method of spec 004 §3.3 over a real WebSocket to the real
 * server: its success path and its typed failure (the wire Failure shared
 * with MCP and HTTP). Agents are the scripted driver.
 */

let h: LoomHarness;
let client: LoomWsClient;

beforeAll(async () => {
  h = await LoomHarness.start();
  client = await wsClient(h);
});

afterAll(async () => {
  await client.close();
  await h.close();
});

async function failure(promise: Promise<unknown>): Promise<WireError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof WireError)) throw new Error(`expected a WireError, got ${String(error)}`);
  return error;
}

async function finishedThread(message: string): Promise<{ threadId: string; runId: string }> {
  const created = await h.createThread({ prompt: message, title: "wire test" });
  await h.waitForEnd(created.runId!);
  return { threadId: created.threadId, runId: created.runId! };
}

describe("WebSocket methods", () => {
  it("the method table has all 18 methods of spec 004 and guestShare.create beside them", () => {
    expect(WS_METHODS).toHaveLength(19);
    expect(WS_METHODS.filter((method) => method.startsWith("orchestration."))).toHaveLength(18);
    expect(WS_METHODS).toContain("guestShare.create");
  });

  it("guestShare.create: opens a thread's guest share and hands back its link, the same one while it is open; an unknown thread is thread_not_found", async () => {
    const created = await h.createThread({ title: "shared over the wire" });
    const link = await client.request("guestShare.create", { threadId: created.threadId });
    expect(link).toMatchObject({ threadId: created.threadId, url: expect.stringMatching(/\/g\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/) });
    expect(Date.parse(link.expiresAt)).toBeGreaterThan(Date.now());
    expect(h.state.threads.get(created.threadId)?.guestShare?.closedAt).toBeNull();
    expect(await client.request("guestShare.create", { threadId: created.threadId })).toEqual(link);
    const before = h.state.lastSequence;
    const missing = await failure(client.request("guestShare.create", { threadId: "thread:none" }));
    expect(missing.failure).toMatchObject({ code: "thread_not_found" });
    const bad = await failure(client.request("guestShare.create", { threadId: "" }));
    expect(bad.failure).toMatchObject({ code: "invalid_request" });
    expect(h.state.lastSequence).toBe(before);
  });

  it("orchestration.dispatchCommand: accepted, rejected (a receipt) and invalid (a failure)", async () => {
    const accepted = await client.request("orchestration.dispatchCommand", { command: { type: "thread.create", commandId: "cmd:ws:1", data: { threadId: "thread:ws-1", projectId: "default", title: "from ws" } } });
    expect(accepted).toMatchObject({ status: "accepted", commandId: "cmd:ws:1", eventCount: 1 });
    expect(h.state.threads.get("thread:ws-1")?.title).toBe("from ws");
    const rejected = await client.request("orchestration.dispatchCommand", { command: { type: "thread.archive", commandId: "cmd:ws:2", data: { threadId: "thread:none" } } });
    expect(rejected).toMatchObject({ status: "rejected", rejection: { code: "thread_not_found" } });
    const invalid = await failure(client.request("orchestration.dispatchCommand", { command: { type: "thread.explode", commandId: "c", data: {} } }));
    expect(invalid.failure).toMatchObject({ code: "invalid_request", retryable: false, details: { reason: "unknown_command_type" } });
  });

  it("orchestration.searchThreads and searchThread: hits across threads and within one; bad queries are invalid_request", async () => {
    const { threadId } = await finishedThread("the zanzibar ledger");
    const other = await finishedThread("zanzibar again elsewhere");
    const across = await client.request("orchestration.searchThreads", { query: "zanzibar" });
    expect(new Set(across.hits.map((hit) => hit.threadId))).toEqual(new Set([threadId, other.threadId]));
    expect(across).toMatchObject({ query: "zanzibar", threadId: null, complete: true });
    const within = await client.request("orchestration.searchThread", { threadId, query: "zanzibar ledger", kinds: ["message"] });
    expect(within.threadId).toBe(threadId);
    expect(within.hits.length).toBeGreaterThan(0);
    expect(within.hits.every((hit) => hit.threadId === threadId)).toBe(true);
    expect((await failure(client.request("orchestration.searchThread", { threadId: "thread:nope", query: "zanzibar" }))).failure.code).toBe("thread_not_found");
    expect((await failure(client.request("orchestration.searchThreads", { query: "!!! ???" }))).failure.code).toBe("invalid_request");
    expect((await failure(client.request("orchestration.searchThreads", { query: "x", limit: 51 }))).failure.code).toBe("invalid_request");
  });

  it("orchestration.searchThreadStream: every hit of a thread a page at a time, then complete; failures are typed", async () => {
    const created = await h.createThread({ prompt: script(...Array.from({ length: 5 }, (_, n) => ({ say: `marmalade number ${n}` }))) });
    await h.waitForEnd(created.runId!);
    const all = await client.request("orchestration.searchThread", { threadId: created.threadId, query: "marmalade", limit: 50 });
    // The five answers and the user message holding the script.
    expect(all.hits.length).toBe(6);
    const stream = RecordedStream.open(client, "orchestration.searchThreadStream", { threadId: created.threadId, query: "marmalade", pageSize: 2 });
    await stream.ended();
    expect(stream.completed).toBe(true);
    expect(stream.updates.map((u) => [u.offset, u.hits.length, u.hasMore])).toEqual([
      [0, 2, true],
      [2, 2, true],
      [4, 2, false],
    ]);
    expect(stream.updates.flatMap((u) => u.hits.map((hit) => hit.itemId))).toEqual(all.hits.map((hit) => hit.itemId));
    const missing = RecordedStream.open(client, "orchestration.searchThreadStream", { threadId: "thread:nope", query: "marmalade" });
    expect((await missing.failed()).failure.code).toBe("thread_not_found");
    const bad = RecordedStream.open(client, "orchestration.searchThreadStream", { threadId: created.threadId, query: "marmalade", pageSize: 0 });
    expect((await bad.failed()).failure.code).toBe("invalid_request");
  });

  it("orchestration.getArchivedShellSnapshot lists only archived threads", async () => {
    const { threadId } = await finishedThread("to be archived");
    await h.dispatch("thread.archive", { threadId });
    const archived = await client.request("orchestration.getArchivedShellSnapshot", {});
    expect(archived.threads.map((row) => row.id)).toContain(threadId);
    expect(archived.threads.every((row) => row.archived)).toBe(true);
    expect(archived.snapshotSequence).toBe(h.state.lastSequence);
    expect((await failure(client.request("orchestration.getArchivedShellSnapshot", { extra: true } as never))).failure.code).toBe("invalid_request");
  });

  it("orchestration.getThreadProjection: the whole projection, or thread_not_found", async () => {
    const { threadId, runId } = await finishedThread("project me");
    const projection = await client.request("orchestration.getThreadProjection", { threadId });
    expect(projection.thread.id).toBe(threadId);
    expect(projection.runs.map((run) => run.id)).toEqual([runId]);
    expect(projection.attempts.map((attempt) => attempt.runId)).toEqual([runId]);
    expect(projection.items.map((item) => item.type)).toEqual(["user_message", "assistant_message"]);
    expect(projection.items[1]).toMatchObject({ type: "assistant_message", text: "Echo: project me" });
    const missing = await failure(client.request("orchestration.getThreadProjection", { threadId: "thread:missing" }));
    expect(missing.failure).toEqual({ code: "thread_not_found", message: "thread thread:missing does not exist", retryable: false });
  });

  it("orchestration.getTurnItem: one item, or invalid_request for an unknown one", async () => {
    const { threadId } = await finishedThread("item please");
    const [, answer] = h.items(threadId);
    const { item } = await client.request("orchestration.getTurnItem", { threadId, itemId: answer!.id });
    expect(item).toEqual(answer);
    expect((await failure(client.request("orchestration.getTurnItem", { threadId, itemId: "turn-item:nope" }))).failure.code).toBe("invalid_request");
    expect((await failure(client.request("orchestration.getTurnItem", { threadId: "thread:nope", itemId: answer!.id }))).failure.code).toBe("thread_not_found");
  });

  it("orchestration.launchThread starts a thread; bad input is invalid_request and creates nothing", async () => {
    const launched = await client.request("orchestration.launchThread", { message: "launched over ws", title: "ws launch" });
    expect(launched).toMatchObject({ title: "ws launch", workspaceStrategy: "root", providerInstanceId: "scripted" });
    await h.waitForEnd(launched.runId!);
    expect(h.assistantTexts(launched.threadId)).toEqual(["Echo: launched over ws"]);
    const threads = h.state.threads.size;
    expect((await failure(client.request("orchestration.launchThread", { message: "" }))).failure.code).toBe("invalid_request");
    expect((await failure(client.request("orchestration.launchThread", { message: "x", target: { providerInstanceId: "nope" } }))).failure.code).toBe("provider_unavailable");
    expect(h.state.threads.size).toBe(threads);
  });

  it("orchestration.getThreadFamily: the lineage with statuses, parents first", async () => {
    const parent = await h.createThread({ prompt: script({ call: "delegate_task", args: { task: "child work", title: "the child" }, as: "d" }, { say: "delegated {{d.taskId}}" }) });
    await h.waitForEnd(parent.runId!);
    const child = await h.until(() => [...h.state.threads.values()].find((t) => t.lineage.parentThreadId === parent.threadId), "the child thread");
    await h.until(() => h.runs(child.id).at(-1)?.endedAt, "the child's run to end");
    const family = await client.request("orchestration.getThreadFamily", { threadId: child.id });
    expect(family.rootThreadId).toBe(parent.threadId);
    expect(family.threads.map((member) => [member.threadId, member.parentThreadId, member.relation])).toEqual([
      [parent.threadId, null, "root"],
      [child.id, parent.threadId, "subagent"],
    ]);
    expect(family.threads.map((member) => member.runStatus)).toEqual(["completed", "completed"]);
    expect((await failure(client.request("orchestration.getThreadFamily", { threadId: "thread:nope" }))).failure.code).toBe("thread_not_found");
  });

  it("orchestration.subscribeShell: a snapshot, then rows as threads change", async () => {
    const stream = RecordedStream.open(client, "orchestration.subscribeShell", {});
    const first = await stream.next((u) => u.kind === "snapshot");
    const created = await h.createThread({ prompt: "shell row" });
    const row = await stream.next((u) => u.kind === "upsert" && u.thread.id === created.threadId && u.thread.runStatus === "completed", "the new thread's completed row");
    expect(first.kind === "snapshot" && first.snapshot.threads.some((t) => t.id === created.threadId)).toBe(false);
    expect(row.kind === "upsert" && row.sequence).toBeGreaterThan(first.kind === "snapshot" ? first.snapshot.snapshotSequence : 0);
    await h.dispatch("thread.archive", { threadId: created.threadId });
    await stream.next((u) => u.kind === "remove" && u.threadId === created.threadId, "the archived thread's removal");
    stream.close();
    await stream.ended();
    expect(stream.completed).toBe(true);
    const bad = RecordedStream.open(client, "orchestration.subscribeShell", { afterSequence: -1 });
    expect((await bad.failed()).failure.code).toBe("invalid_request");
  });

  it("orchestration.subscribeArchivedShell: archived rows come and go", async () => {
    const { threadId } = await finishedThread("archive me later");
    const stream = RecordedStream.open(client, "orchestration.subscribeArchivedShell", {});
    await stream.next((u) => u.kind === "snapshot");
    await h.dispatch("thread.archive", { threadId });
    await stream.next((u) => u.kind === "upsert" && u.thread.id === threadId && u.thread.archived);
    await h.dispatch("thread.unarchive", { threadId });
    await stream.next((u) => u.kind === "remove" && u.threadId === threadId);
    stream.close();
  });

  it("orchestration.subscribeThread: a bounded snapshot, every event, completion on delete; thread_not_found", async () => {
    const { threadId } = await finishedThread("first");
    const stream = RecordedStream.open(client, "orchestration.subscribeThread", { threadId });
    const start = await stream.next((u) => u.kind === "snapshot");
    expect(start.kind === "snapshot" && start.snapshot.items.map((i) => i.type)).toEqual(["user_message", "assistant_message"]);
    await h.owner.ok("t3_thread_send", { threadId, message: "second" });
    await stream.next((u) => u.kind === "event" && u.event.type === "turn-item.updated" && (u.event.data as { item: { text?: string } }).item.text === "Echo: second");
    await h.dispatch("thread.delete", { threadId });
    await stream.ended();
    const events = stream.updates.filter((u): u is Extract<ThreadStreamUpdate, { kind: "event" }> => u.kind === "event");
    expect(events.at(-1)?.event.type).toBe("thread.deleted");
    const sequences = events.map((u) => u.event.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    const missing = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: "thread:nope" });
    expect((await missing.failed()).failure.code).toBe("thread_not_found");
  });

  it("orchestration.subscribeCommandOutput: live chunks while the command runs, then the retained tail", async () => {
    const command = "for i in 1 2 3 4; do echo line-$i; sleep 0.2; done";
    const created = await h.createThread({ prompt: script({ run: command }) });
    const thread = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: created.threadId });
    const started = await thread.next((u) => u.kind === "output", "the command's output stream");
    if (started.kind !== "output") throw new Error("unreachable");
    const output = RecordedStream.open(client, "orchestration.subscribeCommandOutput", { threadId: created.threadId, outputStreamId: started.outputStreamId });
    await output.ended();
    expect(output.completed).toBe(true);
    const [tail, ...chunks] = output.updates;
    expect(tail).toMatchObject({ kind: "tail", source: "live", truncated: false });
    const text = output.updates.map((u) => u.text).join("");
    expect(text).toBe("line-1\nline-2\nline-3\nline-4\n");
    expect(chunks.length).toBeGreaterThan(0);
    // The completed item names the same stream.
    await h.waitForEnd(created.runId!);
    const item = h.items(created.threadId).find((i) => i.type === "command_execution");
    expect(item).toMatchObject({ type: "command_execution", outputStreamId: started.outputStreamId, outputPreview: "line-1\nline-2\nline-3\nline-4\n" });
    // A late subscriber gets the retained tail of the ended command at once.
    const late = RecordedStream.open(client, "orchestration.subscribeCommandOutput", { threadId: created.threadId, outputStreamId: started.outputStreamId, fromOffset: 7 });
    await late.ended();
    expect(late.updates).toEqual([{ kind: "tail", source: "live", offset: 7, text: "line-2\nline-3\nline-4\n", truncated: false, ended: true }]);
    thread.close();
    const unknown = RecordedStream.open(client, "orchestration.subscribeCommandOutput", { threadId: created.threadId, outputStreamId: "output-stream:nope" });
    expect((await unknown.failed()).failure.code).toBe("invalid_request");
  });

  it("answers protocol mistakes with typed errors and keeps the connection", async () => {
    const unknown = await failure(client.request("orchestration.nope" as WsRequestMethod, {}));
    expect(unknown.failure).toMatchObject({ code: "invalid_request", message: "unknown method orchestration.nope" });
    const projection = await client.request("orchestration.getArchivedShellSnapshot", {});
    expect(projection.snapshotSequence).toBeGreaterThan(0);
  });
});
