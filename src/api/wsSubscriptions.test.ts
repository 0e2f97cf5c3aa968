import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { type LoomWsClient, type WebSocketFactory } from "../client/loomWsClient.js";
import { bearerWebSocket } from "../client/nodeWebSocket.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { ShellStreamUpdate, ThreadStreamUpdate } from "../contracts/wire/projections.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { type LoomServer, startLoomServer } from "../server/loomServer.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { RecordedStream, wsClient } from "../testkit/wireClients.js";

/**
 * Subscription guarantees over real WebSockets to the real server: a
 * snapshot and the stream after it miss and repeat nothing while other
 * commands commit concurrently; a dropped connection resumes from the last
 * sequence; a server restart is survived; live deltas reach subscribers.
 */

let h: LoomHarness;

beforeAll(async () => {
  h = await LoomHarness.start();
});

afterAll(async () => {
  await h.close();
});

/** Every committed event of the log, read by replaying it (Orchestrator.follow from 0). */
async function logEvents(orchestrator: Orchestrator, through: number): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  await new Promise<void>((resolve) => {
    const subscription = orchestrator.follow(0, (event) => {
      events.push(event);
      if (event.sequence >= through) {
        subscription.close();
        resolve();
      }
    });
  });
  return events;
}

type ThreadEvent = Extract<ThreadStreamUpdate, { kind: "event" }>;

function eventSequences(updates: readonly ThreadStreamUpdate[]): number[] {
  return updates.filter((u): u is ThreadEvent => u.kind === "event").map((u) => u.event.sequence);
}

function startSequence(update: ThreadStreamUpdate | ShellStreamUpdate | undefined): number {
  if (update?.kind === "snapshot") return update.snapshot.snapshotSequence;
  if (update?.kind === "resumed") return update.afterSequence;
  throw new Error(`not a first update: ${JSON.stringify(update)}`);
}

async function renames(client: LoomWsClient, threadId: string, from: number, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, n) =>
      client.request("orchestration.dispatchCommand", { command: { type: "thread.metadata.update", commandId: `cmd:rename:${randomUUID()}`, data: { threadId, title: `title ${from + n}` } } }),
    ),
  );
}

describe("exactly once across the snapshot boundary", () => {
  it("subscriptions opened during a storm of concurrent commits each get a consistent snapshot and then every later event once, in order", async () => {
    const writers = await Promise.all([wsClient(h), wsClient(h), wsClient(h)]);
    const readers = await Promise.all([wsClient(h), wsClient(h)]);
    const threadId = `thread:storm-${randomUUID()}`;
    await writers[0].request("orchestration.dispatchCommand", { command: { type: "thread.create", commandId: `cmd:${threadId}`, data: { threadId, projectId: "default", title: "title -1" } } });
    const threadStreams: RecordedStream<ThreadStreamUpdate>[] = [];
    const shellStreams: RecordedStream<ShellStreamUpdate>[] = [];
    // Three writers commit 20 renames each per round; a thread and a shell subscription open inside every round.
    for (let round = 0; round < 8; round++) {
      const writing = writers.map((writer, w) => renames(writer, threadId, round * 60 + w * 20, 20));
      const reader = readers[round % readers.length]!;
      threadStreams.push(RecordedStream.open(reader, "orchestration.subscribeThread", { threadId }));
      shellStreams.push(RecordedStream.open(reader, "orchestration.subscribeShell", {}));
      await Promise.all(writing);
    }
    const last = await writers[0].request("orchestration.dispatchCommand", {
      command: { type: "thread.metadata.update", commandId: `cmd:last:${randomUUID()}`, data: { threadId, title: "the end" } },
    });
    expect(last.status).toBe("accepted");
    const through = h.state.lastSequence;
    const log = await logEvents(h.server.orchestrator, through);
    const threadLog = log.filter((event) => event.streamId === threadId);
    const titleAt = (sequence: number): string => {
      const renamed = threadLog.filter((event) => event.sequence <= sequence).at(-1)!;
      return (renamed.data as { thread: { title: string } }).thread.title;
    };
    for (const stream of threadStreams) {
      await stream.next((u) => u.kind === "event" && u.event.sequence === threadLog.at(-1)!.sequence, "the last rename");
      const first = stream.updates[0];
      const from = startSequence(first);
      // The snapshot shows exactly the state at its sequence, and the stream continues from there with no gap and no repeat.
      if (first?.kind === "snapshot") expect(first.snapshot.thread.title).toBe(titleAt(from));
      expect(eventSequences(stream.updates)).toEqual(threadLog.filter((event) => event.sequence > from).map((event) => event.sequence));
      stream.close();
    }
    // Subscriptions opened at different points of the storm started at different sequences.
    expect(new Set(threadStreams.map((s) => startSequence(s.updates[0]))).size).toBeGreaterThan(1);
    for (const stream of shellStreams) {
      const row = await stream.next((u) => u.kind === "upsert" && u.thread.id === threadId && u.thread.title === "the end", "the final row");
      const from = startSequence(stream.updates[0]);
      const upserts = stream.updates.filter((u): u is Extract<ShellStreamUpdate, { kind: "upsert" }> => u.kind === "upsert" && u.thread.id === threadId);
      // Rows come in log order, each after the snapshot; a row is the thread as the state holds it when sent, so its title is the one at its sequence or a later one.
      const titlesFrom = (sequence: number): Set<string> => new Set([titleAt(sequence), ...threadLog.filter((event) => event.sequence > sequence).map((event) => titleAt(event.sequence))]);
      expect(upserts.filter((u) => !(u.sequence > from && titlesFrom(u.sequence).has(u.thread.title)))).toEqual([]);
      expect(upserts.map((u) => u.sequence)).toEqual([...upserts.map((u) => u.sequence)].sort((a, b) => a - b));
      expect(row.kind === "upsert" && row.sequence).toBe(through);
      stream.close();
    }
    for (const client of [...writers, ...readers]) await client.close();
  });
});

/** Connection states as the client reports them, with a wait for one to be reached. */
function connectionStates(): { readonly seen: string[]; onChange(state: string): void; reach(state: string, count?: number): Promise<void> } {
  const seen: string[] = [];
  const waiters: (() => void)[] = [];
  return {
    seen,
    onChange(state) {
      seen.push(state);
      for (const waiter of waiters.splice(0)) waiter();
    },
    async reach(state, count = 1) {
      while (seen.filter((s) => s === state).length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** A socket factory whose sockets the test can drop, and which holds reconnects until released. */
function droppableSockets(token: string): { connect: WebSocketFactory; drop(): void; hold(): void; release(): void; readonly opened: number } {
  const base = bearerWebSocket(token);
  let current: WebSocket | null = null;
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  let opened = 0;
  return {
    connect: async (url) => {
      if (gate !== null) await gate;
      opened += 1;
      const socket = (await base(url)) as unknown as WebSocket;
      current = socket;
      return socket as never;
    },
    drop: () => current?.terminate(),
    hold: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => {
      gate = null;
      open?.();
    },
    get opened() {
      return opened;
    },
  };
}

describe("resume after a dropped connection", () => {
  it("the client reconnects and resumes each subscription from its last sequence: no snapshot, nothing missed or repeated", async () => {
    const sockets = droppableSockets(h.ownerToken);
    const states = connectionStates();
    const client = await wsClient(h, { connect: sockets.connect, reconnectDelayMs: { min: 10, max: 10 }, onConnectionChange: (state) => states.onChange(state) });
    const created = await h.createThread({ title: "resume me" });
    const threadId = created.threadId;
    const thread = RecordedStream.open(client, "orchestration.subscribeThread", { threadId });
    const shell = RecordedStream.open(client, "orchestration.subscribeShell", {});
    const snapshot = await thread.next((u) => u.kind === "snapshot", "the snapshot");
    await shell.next((u) => u.kind === "snapshot", "the shell snapshot");
    await h.dispatch("thread.metadata.update", { threadId, title: "before the drop" });
    await thread.next((u) => u.kind === "event", "an event before the drop");
    const before = h.state.lastSequence;
    // The connection drops; while the client is away, the thread changes.
    sockets.hold();
    sockets.drop();
    await states.reach("reconnecting");
    for (const title of ["while away 1", "while away 2", "while away 3"]) await h.dispatch("thread.metadata.update", { threadId, title });
    sockets.release();
    const resumed = await thread.next((u) => u.kind === "resumed", "the resumed marker");
    expect(resumed).toEqual({ kind: "resumed", afterSequence: before });
    await h.dispatch("thread.metadata.update", { threadId, title: "after the return" });
    const through = h.state.lastSequence;
    await thread.next((u) => u.kind === "event" && u.event.sequence === through, "the event after the return");
    const threadLog = (await logEvents(h.server.orchestrator, through)).filter((event) => event.streamId === threadId);
    expect(eventSequences(thread.updates)).toEqual(threadLog.filter((event) => event.sequence > startSequence(snapshot)).map((event) => event.sequence));
    expect(thread.updates.filter((u) => u.kind === "snapshot")).toHaveLength(1);
    // The shell resumed too, and its latest row is the thread as it is now.
    await shell.next((u) => u.kind === "resumed", "the shell's resumed marker");
    await shell.next((u) => u.kind === "upsert" && u.thread.id === threadId && u.thread.title === "after the return", "the shell row after the return");
    expect(shell.updates.filter((u) => u.kind === "snapshot")).toHaveLength(1);
    expect(sockets.opened).toBe(2);
    expect(states.seen).toEqual(["open", "reconnecting", "open"]);
    await client.close();
  });

  it("a resume point the server cannot serve (ahead of its log) starts from a fresh snapshot", async () => {
    const client = await wsClient(h);
    const created = await h.createThread({ title: "future" });
    const stream = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: created.threadId, afterSequence: h.state.lastSequence + 1_000 });
    const first = await stream.next(() => true, "the first update");
    expect(first.kind === "snapshot" && first.snapshot.snapshotSequence).toBe(h.state.lastSequence);
    await client.close();
  });
});

describe("a server restart while a client is subscribed", () => {
  it("the client reconnects to the restarted server and resumes from the log on disk", async () => {
    const own = await LoomHarness.start();
    const stateDir = join(own.dir, ".loom");
    const port = Number(new URL(own.server.url).port);
    let server: LoomServer = own.server;
    const states = connectionStates();
    const client = await wsClient(own, { reconnectDelayMs: { min: 20, max: 100 }, onConnectionChange: (state) => states.onChange(state) });
    try {
      const created = await own.createThread({ title: "survivor" });
      const threadId = created.threadId;
      const stream = RecordedStream.open(client, "orchestration.subscribeThread", { threadId });
      const snapshot = await stream.next((u) => u.kind === "snapshot", "the snapshot");
      await own.dispatch("thread.metadata.update", { threadId, title: "before the restart" });
      const before = own.state.lastSequence;
      await stream.next((u) => u.kind === "event" && u.event.sequence === before, "the event before the restart");
      await own.owner.close();
      await server.close();
      await states.reach("reconnecting");
      server = await startLoomServer({ stateDir, cwd: own.dir, configPath: join(own.dir, "loom-config.json"), port });
      const resumed = await stream.next((u) => u.kind === "resumed", "the resume on the restarted server");
      expect(resumed).toEqual({ kind: "resumed", afterSequence: before });
      const receipt = await client.request("orchestration.dispatchCommand", {
        command: { type: "thread.metadata.update", commandId: `cmd:${randomUUID()}`, data: { threadId, title: "after the restart" } },
      });
      expect(receipt.status).toBe("accepted");
      const through = server.orchestrator.state.lastSequence;
      await stream.next((u) => u.kind === "event" && u.event.sequence === through, "the event after the restart");
      const threadLog = (await logEvents(server.orchestrator, through)).filter((event) => event.streamId === threadId);
      expect(eventSequences(stream.updates)).toEqual(threadLog.filter((event) => event.sequence > startSequence(snapshot)).map((event) => event.sequence));
      expect(states.seen.slice(0, 3)).toEqual(["open", "reconnecting", "open"]);
    } finally {
      await client.close();
      await server.close();
      rmSync(own.dir, { recursive: true, force: true });
    }
  });
});

describe("live streaming", () => {
  it("assistant deltas reach thread subscribers as the agent streams, then the completed item arrives as an event", async () => {
    const client = await wsClient(h);
    const created = await h.createThread({ title: "streaming" });
    const stream = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: created.threadId });
    await stream.next((u) => u.kind === "snapshot", "the snapshot");
    const text = "the quick brown fox jumps over the lazy dog";
    await h.owner.ok("t3_thread_send", { threadId: created.threadId, message: script({ say: text, stream: true }) });
    const completed = await stream.next(
      (u) => u.kind === "event" && u.event.type === "turn-item.updated" && (u.event.data as { item: { type: string } }).item.type === "assistant_message",
      "the completed message",
    );
    const item = (completed as ThreadEvent).event.data as { item: { id: string; text: string } };
    const deltas = stream.updates.filter((u): u is Extract<ThreadStreamUpdate, { kind: "delta" }> => u.kind === "delta");
    expect(deltas.length).toBe(9);
    expect(deltas.map((d) => d.text).join("")).toBe(text);
    expect(new Set(deltas.map((d) => d.itemId))).toEqual(new Set([item.item.id]));
    // Every delta came before the completed item.
    expect(stream.updates.indexOf(deltas.at(-1)!)).toBeLessThan(stream.updates.indexOf(completed));
    // Deltas are live only: a fresh subscriber's snapshot has the item and no deltas.
    const late = RecordedStream.open(client, "orchestration.subscribeThread", { threadId: created.threadId });
    const snapshot = await late.next((u) => u.kind === "snapshot", "the late snapshot");
    expect(snapshot.kind === "snapshot" && snapshot.snapshot.items.at(-1)).toMatchObject({ type: "assistant_message", text });
    await client.close();
  });
});
