import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LoomConfigFile } from "../config/config.js";
import { startLoomServer } from "../server/loomServer.js";
import { delegateStep, launchParent, tasksOf, waitForTasks } from "../testkit/delegationHarness.js";
import { LoomHarness, TEST_PROVIDERS, script } from "../testkit/loomHarness.js";
import { pollUntil } from "../testkit/poll.js";
import { sessionList } from "../testkit/warmPoolChecks.js";

/**
 * Warm pools (docs/warm-pools.md) on a real server with scripted agents: a
 * thread's first session takes a warm one, which runs with that thread's
 * credential only; the pool refills; it drains after maxIdleMs, on shutdown,
 * and a restart with another pool config fills the new one.
 */

/** `a` has no pool; `b` keeps two warm sessions whose start-up takes long, so a cold open would show. */
const POOLED: NonNullable<LoomConfigFile["providers"]> = [
  { id: "a", driver: "scripted" },
  { id: "b", driver: "scripted", pool: { size: 2 }, options: { startupDelayMs: 1_500 } },
];

let h: LoomHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

async function warmIds(harness: LoomHarness, instance: string): Promise<string[]> {
  return (await sessionList(harness)).warm.filter((w) => w.providerInstanceId === instance).map((w) => w.warmSessionId);
}

/** Wait (polling the owner route) until `instance` has exactly `count` warm sessions; returns their ids. */
function untilWarm(harness: LoomHarness, instance: string, count: number, timeoutMs = 15_000): Promise<string[]> {
  return pollUntil(() => warmIds(harness, instance), (ids) => ids.length === count, `${count} warm session(s) on ${instance}`, timeoutMs);
}

const logText = (harness: LoomHarness): string => readFileSync(join(harness.dir, ".loom", "logs", "loom.log"), "utf8");

describe("warm pools", () => {
  it("hands a warm session to each child, bound to that child's credential only, and refills", { timeout: 60_000 }, async () => {
    h = await LoomHarness.start({ config: { providers: POOLED } });
    const before = await untilWarm(h, "b", 2);
    expect((await sessionList(h)).warm.find((w) => w.warmSessionId === before[0])).toMatchObject({ providerInstanceId: "b", driver: "scripted", idleMs: expect.any(Number) });

    // Each child delegates a grandchild to `a`: the task's parent is whoever the child's credential names.
    const grandchild = (name: string) => delegateStep([{ say: `grandchild of ${name}` }], { target: { providerInstanceId: "a" } });
    const parent = await launchParent(h, [delegateStep([grandchild("one")], { title: "one" }), delegateStep([grandchild("two")], { title: "two" })]);
    const children = await waitForTasks(h, parent.threadId, 2);
    const childThreads = children.map((task) => task.childThreadId);
    for (const child of childThreads) await waitForTasks(h, child, 1);

    for (const child of childThreads) {
      const [task] = tasksOf(h, child);
      expect(task?.parentThreadId).toBe(child);
    }
    const held = (await sessionList(h)).sessions.filter((s) => childThreads.includes(s.threadId));
    expect(held.map((s) => s.fromPool)).toEqual([true, true]);
    expect(held.every((s) => s.providerInstanceId === "b")).toBe(true);
    // Each child session's credential was minted for that child's thread and session, at hand-out.
    const handOuts = held.map((s) => new RegExp(`opened ${escape(s.providerSessionId)} for ${escape(s.threadId)} on b \\(scripted, from the pool \\(warm:b:[0-9a-f]{8}\\)\\)`));
    // The log file is written asynchronously: wait for the lines.
    await pollUntil(() => logText(h!), (log) => handOuts.every((line) => line.test(log)), "the hand-outs in the log");

    const after = await untilWarm(h, "b", 2);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    expect(await warmIds(h, "a")).toEqual([]);
  });

  it("drains a pool after maxIdleMs without a session, and fills it again on the next one", { timeout: 60_000 }, async () => {
    h = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted", pool: { size: 1, maxIdleMs: 400 } }] } });
    await untilWarm(h, "scripted", 1);
    await untilWarm(h, "scripted", 0);
    await pollUntil(() => logText(h!), (log) => /pool: drained 1 warm session\(s\) of scripted \(no session opened on scripted for 400 ms\)/.test(log), "the drain in the log");

    const { threadId, runId } = await h.launch({ title: "cold", message: script({ say: "hi" }) });
    await h.waitForEnd(runId!);
    const held = (await sessionList(h)).sessions.find((s) => s.threadId === threadId);
    expect(held?.fromPool).toBe(false);
    await untilWarm(h, "scripted", 1);
  });

  it("drains on shutdown; a restart with another pool config fills the new pool", { timeout: 60_000 }, async () => {
    h = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted", pool: { size: 2 } }] } });
    const first = await untilWarm(h, "scripted", 2);
    const dir = h.dir;
    writeFileSync(join(dir, "loom-config.json"), JSON.stringify({ providers: [{ id: "scripted", driver: "scripted", pool: { size: 1 } }], workspaces: { checkpoints: false } }));
    h = await h.restart();
    expect(readFileSync(join(dir, ".loom", "logs", "loom.log"), "utf8")).toContain("pool: drained 2 warm session(s) of scripted (shutdown)");
    const second = await untilWarm(h, "scripted", 1);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    // A warm session is never in the log: nothing was open to reconcile.
    expect([...h.state.providerSessions.values()]).toEqual([]);
  });

  it("refuses at start a pool on a driver that cannot hand a running session to a thread, and a bad pool", async () => {
    h = await LoomHarness.start();
    const configPath = join(h.dir, "bad-config.json");
    const start = () => startLoomServer({ stateDir: join(h!.dir, ".bad"), cwd: h!.dir, configPath });
    writeFileSync(configPath, JSON.stringify({ providers: [...TEST_PROVIDERS, { id: "oc", driver: "opencode", pool: { size: 1 } }] }));
    await expect(start()).rejects.toThrow(/oc[\s\S]*pool: driver "opencode" cannot hand a running session to a thread/);
    writeFileSync(configPath, JSON.stringify({ providers: [{ id: "s", driver: "scripted", pool: { size: -1 } }] }));
    await expect(start()).rejects.toThrow(/providers\[0\]\.pool\.size: must be at least 0/);
    writeFileSync(configPath, JSON.stringify({ providers: [{ id: "s", driver: "scripted", pool: { size: 1, idle: 5 } }] }));
    await expect(start()).rejects.toThrow(/providers\[0\]\.pool/);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
