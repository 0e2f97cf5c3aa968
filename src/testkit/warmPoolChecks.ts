import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { SessionListResult } from "../app/sessions.js";
import type { ModelRule } from "../modelServer/rules.js";
import { agentHomeName } from "../server/agentHomes.js";
import type { LoomHarness } from "./loomHarness.js";
import { pollUntil } from "./poll.js";

/**
 * Checks shared by the warm-pool tests (docs/warm-pools.md): the owner's
 * session list, a wait for a full pool, and a thread whose agent delegates
 * once through Loom's MCP, so the task's parent shows whose credential it
 * used.
 */

/** The message a delegating thread is launched with. */
export const DELEGATE_MESSAGE = "Delegate the greeting.";

/** Model rules: the delegating thread's first request calls delegate_task (to `scripted`); every other request gets a plain answer. */
export const DELEGATING_RULES: readonly ModelRule[] = [
  {
    when: { toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: DELEGATE_MESSAGE },
    reply: { toolCall: { tool: "delegate_task", arguments: { task: "say hello", mode: "async", target: { providerInstanceId: "scripted" } } } },
  },
  // The tool's result and the notice of the child's end.
  { reply: { text: "noted" } },
];

/** GET /api/sessions as the owner. */
export async function sessionList(harness: LoomHarness): Promise<SessionListResult> {
  const res = await fetch(`${harness.server.url}/api/sessions`, { headers: { authorization: `Bearer ${harness.ownerToken}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as SessionListResult;
}

/** Wait until the server holds `count` warm sessions. */
export function untilWarm(harness: LoomHarness, count: number, timeoutMs: number): Promise<SessionListResult> {
  return pollUntil(() => sessionList(harness), (list) => list.warm.length === count, `${count} warm session(s)`, timeoutMs);
}

/** Launch a thread on `instance` whose run delegates once and ends completed; returns its id. */
export async function delegatingThread(harness: LoomHarness, instance: string, title: string, timeoutMs: number): Promise<string> {
  const launched = await harness.launch({ message: DELEGATE_MESSAGE, title, target: { providerInstanceId: instance } });
  const run = await harness.waitForEnd(launched.runId!, timeoutMs);
  expect(run.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");
  return launched.threadId;
}

/**
 * With one warm session on `instance`: two delegating threads each take a
 * warm session (the pool refills between them), each delegates with its own
 * credential (the task's parent is the caller), and the first warm home
 * became the first thread's home, holding `homeEntry` (the agent's saved
 * conversations), with the warm path left as a link to it.
 */
export async function expectPooledThreads(harness: LoomHarness, instance: string, homeEntry: string, timeoutMs: number): Promise<void> {
  const warm = await untilWarm(harness, 1, timeoutMs);
  const warmId = warm.warm[0]!.warmSessionId;
  const agents = join(harness.dir, ".loom", "agents", instance);
  const warmHome = join(agents, `.warm-${warmId.split(":").at(-1)!}`);
  expect(existsSync(warmHome)).toBe(true);

  const first = await delegatingThread(harness, instance, "first", timeoutMs);
  const afterFirst = await untilWarm(harness, 1, timeoutMs);
  expect(afterFirst.sessions.find((s) => s.threadId === first)?.fromPool).toBe(true);
  expect(afterFirst.warm[0]!.warmSessionId).not.toBe(warmId);

  const second = await delegatingThread(harness, instance, "second", timeoutMs);
  const afterSecond = await sessionList(harness);
  expect(afterSecond.sessions.find((s) => s.threadId === second)?.fromPool).toBe(true);

  // Each delegation was made with its own thread's token: the task's parent is the caller.
  const parents = [...harness.state.tasks.values()].map((task) => task.parentThreadId).sort();
  expect(parents).toEqual([first, second].sort());

  // The warm home became the first thread's home (its conversation is there to resume); the old path is a link to it.
  const home = join(agents, agentHomeName(first));
  expect(readdirSync(home)).toContain(homeEntry);
  expect(lstatSync(warmHome).isSymbolicLink()).toBe(true);
  expect(readlinkSync(warmHome)).toBe(home);
}
