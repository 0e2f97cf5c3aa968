import { describe, expect, it } from "vitest";
import { EFFECTS, type EffectKind } from "../contracts/effects.js";
import type { NewOutboxEffect } from "../contracts/envelopes.js";
import type { OutboxClaim } from "../store/eventStore.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { type EffectHandlers, OutboxWorker } from "./outboxWorker.js";

/** Handlers that record what ran; `fail` makes a kind throw until `failures` attempts have failed. */
function recordingHandlers(ran: string[], behaviour: Partial<Record<EffectKind, () => Promise<void>>> = {}): EffectHandlers {
  const handle = (kind: EffectKind) => async (payload: unknown) => {
    ran.push(`${kind}:${JSON.stringify(payload)}`);
    await behaviour[kind]?.();
  };
  return {
    "provider.turn.start": handle("provider.turn.start"),
    "provider.turn.steer": handle("provider.turn.steer"),
    "provider.turn.interrupt": handle("provider.turn.interrupt"),
    "provider.request.respond": handle("provider.request.respond"),
    "provider.background-work.cancel": handle("provider.background-work.cancel"),
    "provider.session.release": handle("provider.session.release"),
    "workspace.prepare": handle("workspace.prepare"),
    "checkpoint.capture": handle("checkpoint.capture"),
    "checkpoint.restore": handle("checkpoint.restore"),
    "workspace.cleanup": handle("workspace.cleanup"),
    "merge-queue.merge": handle("merge-queue.merge"),
  };
}

async function commitEffect(store: MemoryEventStore, effect: NewOutboxEffect, commandId = "cmd:1"): Promise<void> {
  await store.commit([{ receipt: { status: "accepted", commandId, commandType: "test", acceptedAt: new Date(0).toISOString() }, events: [], outbox: [effect] }]);
}

const interrupt = (payload: unknown = { threadId: "thread:a", runId: "run:1" }): NewOutboxEffect => ({
  kind: "provider.turn.interrupt",
  streamId: "thread:a",
  payload,
  replaySafe: true,
});

describe("OutboxWorker", () => {
  it("calls beforeRun once a claim leased rows, before any of them runs", async () => {
    const store = new MemoryEventStore();
    const order: string[] = [];
    const worker = new OutboxWorker({
      store,
      owner: "test",
      handlers: recordingHandlers(order),
      beforeRun: () => {
        order.push("beforeRun");
        return Promise.resolve();
      },
    });
    worker.start();
    await worker.idle();
    // An empty claim runs nothing, so there is nothing to catch up for.
    expect(order).toEqual([]);
    await commitEffect(store, interrupt());
    await commitEffect(store, interrupt({ threadId: "thread:a", runId: "run:2" }), "cmd:2");
    worker.kick();
    await worker.idle();
    await worker.stop();
    expect(order).toEqual(["beforeRun", 'provider.turn.interrupt:{"threadId":"thread:a","runId":"run:1"}', 'provider.turn.interrupt:{"threadId":"thread:a","runId":"run:2"}']);
  });

  it("stop waits for the effects of a claim that was in flight when it was called", async () => {
    const store = new MemoryEventStore();
    await commitEffect(store, { kind: "provider.turn.start", streamId: "thread:a", payload: { threadId: "thread:a", runId: "run:1" }, replaySafe: false });
    // The claim answers only after stop() was called.
    let releaseClaim = () => undefined as void;
    const claimGate = new Promise<void>((resolve) => (releaseClaim = resolve));
    const claim = store.claimOutbox.bind(store);
    store.claimOutbox = async (c: OutboxClaim) => {
      await claimGate;
      return claim(c);
    };
    const ran: string[] = [];
    const worker = new OutboxWorker({ store, owner: "test", handlers: recordingHandlers(ran) });
    worker.start();
    const stopped = worker.stop();
    releaseClaim();
    await stopped;
    expect(ran).toEqual(['provider.turn.start:{"threadId":"thread:a","runId":"run:1"}']);
    expect(await store.listOutbox("done")).toHaveLength(1);
  });

  it("retries a replay-safe effect with backoff by its kind's policy, then fails it for good", async () => {
    const store = new MemoryEventStore();
    await commitEffect(store, interrupt());
    let now = Date.now() + 1;
    const ran: string[] = [];
    const failed: string[] = [];
    const worker = new OutboxWorker({
      store,
      owner: "test",
      clock: () => now,
      handlers: recordingHandlers(ran, { "provider.turn.interrupt": () => Promise.reject(new Error("provider busy")) }),
      onFailed: (row, error) => failed.push(`${row.kind}: ${(error as Error).message}`),
    });
    const policy = EFFECTS["provider.turn.interrupt"].retry;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt += 1) {
      worker.kick();
      await worker.idle();
      expect(ran).toHaveLength(attempt);
      if (attempt < policy.maxAttempts) {
        const [pending] = await store.listOutbox("pending");
        const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
        expect(pending).toMatchObject({ attempts: attempt, availableAt: now + delay, lastError: "provider busy" });
        // Not claimable before its retry time.
        now += delay - 1;
        worker.kick();
        await worker.idle();
        expect(ran).toHaveLength(attempt);
        now += 1;
      }
    }
    expect(await store.listOutbox("failed")).toHaveLength(1);
    expect(failed).toEqual(["provider.turn.interrupt: provider busy"]);
  });

  it("fails a process-bound effect at once, and one whose payload does not match its schema without running it", async () => {
    const store = new MemoryEventStore();
    await commitEffect(store, { kind: "provider.turn.start", streamId: "thread:a", payload: { threadId: "thread:a", runId: "run:1" }, replaySafe: false });
    await commitEffect(store, interrupt({ threadId: "thread:a" }), "cmd:2");
    const ran: string[] = [];
    const failed: string[] = [];
    const worker = new OutboxWorker({
      store,
      owner: "test",
      handlers: recordingHandlers(ran, { "provider.turn.start": () => Promise.reject(new Error("spawn failed")) }),
      onFailed: (row, error) => failed.push(`${row.kind}: ${(error as Error).message}`),
    });
    worker.kick();
    await worker.idle();
    expect(ran).toEqual(['provider.turn.start:{"threadId":"thread:a","runId":"run:1"}']);
    expect(failed).toEqual(["provider.turn.start: spawn failed", "provider.turn.interrupt: effect provider.turn.interrupt has a malformed payload: runId: Invalid input: expected string, received undefined"]);
    expect(await store.listOutbox("failed")).toHaveLength(2);
  });

  it("renews the lease of an effect that runs longer than its lease, so no other worker claims it", async () => {
    const store = new MemoryEventStore();
    await commitEffect(store, interrupt());
    let finish = () => undefined as void;
    const running = new Promise<void>((resolve) => (finish = resolve));
    let started = () => undefined as void;
    const hasStarted = new Promise<void>((resolve) => (started = resolve));
    const leaseMs = 30;
    const worker = new OutboxWorker({
      store,
      owner: "slow",
      leaseMs,
      handlers: recordingHandlers([], {
        "provider.turn.interrupt": () => {
          started();
          return running;
        },
      }),
    });
    worker.kick();
    await hasStarted;
    // Wait until the lease has been renewed several times past its first expiry, then try to take it over.
    const [leased] = await store.listOutbox("leased");
    const firstExpiry = leased!.leaseExpiresAt!;
    for (;;) {
      const [now] = await store.listOutbox("leased");
      if (now!.leaseExpiresAt! > firstExpiry + 2 * leaseMs) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await store.claimOutbox({ owner: "other", now: Date.now(), leaseMs, limit: 10 })).toEqual([]);
    finish();
    await worker.idle();
    expect(await store.listOutbox("done")).toMatchObject([{ leaseOwner: "slow" }]);
  });

  it("never runs an effect twice when its lease lapses and it claims the row again while the handler still runs", async () => {
    let now = 1_000;
    const store = new MemoryEventStore({ clock: () => now });
    await commitEffect(store, interrupt());
    // Renewals are lost: the worker believes it renewed, the store never heard.
    store.renewOutbox = () => Promise.resolve(true);
    let finish = () => undefined as void;
    const running = new Promise<void>((resolve) => (finish = resolve));
    const ran: string[] = [];
    const lines: string[] = [];
    const leaseMs = 60_000;
    const worker = new OutboxWorker({
      store,
      owner: "only",
      clock: () => now,
      leaseMs,
      log: (line) => lines.push(line),
      handlers: recordingHandlers(ran, { "provider.turn.interrupt": () => running }),
    });
    worker.kick();
    for (;;) {
      const [leased] = await store.listOutbox("leased");
      if (leased !== undefined && ran.length === 1) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    now += leaseMs + 1;
    worker.kick();
    for (;;) {
      const [leased] = await store.listOutbox("leased");
      if (leased!.attempts === 2) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    finish();
    await worker.idle();
    expect(ran).toHaveLength(1);
    expect(lines).toEqual(["loom: effect provider.turn.interrupt was claimed again while it still runs here; not running it twice"]);
    expect(await store.listOutbox("done")).toMatchObject([{ attempts: 2, leaseOwner: "only" }]);
  });
});
