import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TreeRollup, TreeWaterfall } from "../contracts/wire/treeViews.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import { delegateStep, startDelegationHarness, tasksOf } from "../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../testkit/loomHarness.js";

/**
 * The tree at a glance over real HTTP (docs/ui.md): `GET /api/ui/trees/:id`
 * (a root's roll-up) and `.../waterfall` (every thread's runs with their waits
 * and requests), for a signed-in page or the owner, on a budgeted root that
 * delegates two children, one of which asks for an approval.
 */

let h: LoomHarness;
let cookie: string;

beforeAll(async () => {
  h = await startDelegationHarness();
  const link = await fetch(`${h.server.url}/api/ui/login-link`, { method: "POST", headers: { authorization: `Bearer ${h.ownerToken}` } });
  const res = await fetch(((await link.json()) as { url: string }).url, { redirect: "manual" });
  cookie = res.headers.get("set-cookie")!.split(";")[0]!;
});

afterAll(async () => {
  await h.close();
});

/** Once the root and both children have no run left to start or finish (a parent's follow-up turn may come late): the roll-up then. */
async function settledRollup(rootThreadId: string, path: string, headers: Record<string, string>): Promise<TreeRollup> {
  await h.until(() => {
    const threads = [rootThreadId, ...tasksOf(h, rootThreadId).map((task) => task.childThreadId)];
    const runs = threads.flatMap((threadId) => (h.state.threadRuns.get(threadId) ?? []).map((runId) => h.state.runs.get(runId)!));
    return threads.length === 3 && runs.every((run) => isTerminalRunStatus(run.status)) ? true : null;
  }, "every thread of the tree to end its runs", 20_000);
  const res = await get(path, headers);
  expect(res.status).toBe(200);
  expect(res.headers.get("cache-control")).toBe("no-store");
  return (await res.json()) as TreeRollup;
}

const get = (path: string, headers: Record<string, string> = { cookie }) => fetch(`${h.server.url}${path}`, { headers });

describe("the tree's roll-up and waterfall routes", () => {
  it("answers 401 without a session, 404 for an unknown thread, and 405 for a write", async () => {
    expect((await get("/api/ui/trees/thread:nope", {})).status).toBe(401);
    expect((await get("/api/ui/trees/thread:nope/waterfall", {})).status).toBe(401);
    const unknown = await get("/api/ui/trees/thread:nope");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "thread_not_found" } });
    expect((await get("/api/ui/trees/thread:nope/waterfall")).status).toBe(404);
    expect((await fetch(`${h.server.url}/api/ui/trees/thread:nope`, { method: "POST", headers: { cookie, "x-loom-csrf": "1", origin: h.server.url } })).status).toBe(405);
  });

  it("rolls up a budgeted root's tree and draws its runs, waits and approval", async () => {
    const root = await h.launch({
      title: "Root",
      target: { providerInstanceId: "a" },
      budget: { tokens: 100_000, turns: 10 },
      message: script(
        delegateStep([{ sleep: 600 }, { say: "first done" }], { title: "First" }),
        delegateStep([{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "second done" }], { title: "Second", mode: "wait" }),
        { say: "root done" },
      ),
    }) as { threadId: string; runId: string };
    const second = await h.until(() => [...h.state.runtimeRequests.values()].find((r) => r.status === "pending" && tasksOf(h, root.threadId).some((t) => t.childThreadId === r.threadId)), "the second child's approval");
    const waiting = (await (await get(`/api/ui/trees/${encodeURIComponent(root.threadId)}`)).json()) as TreeRollup;
    expect(waiting.counts.waitingOnYou).toBe(1);
    const respond = await fetch(`${h.server.url}/api/requests/${encodeURIComponent(second.id)}/respond`, { method: "POST", headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json" }, body: JSON.stringify({ decision: "accept" }) });
    expect(respond.status).toBe(200);
    // Any thread of the tree names it; the owner's bearer works too. Read until every thread is done.
    const childPath = `/api/ui/trees/${encodeURIComponent(second.threadId)}`;
    const rollup = await settledRollup(root.threadId, childPath, { authorization: `Bearer ${h.ownerToken}` });
    expect(rollup).toMatchObject({
      rootThreadId: root.threadId,
      threadCount: 3,
      counts: { running: 0, waitingOnYou: 0, failed: 0, done: 3, stopped: 0 },
      budget: { limits: { tokens: 100_000, turns: 10 }, exceeded: null, reached: [] },
    });
    expect(rollup.spent.turns).toBeGreaterThanOrEqual(3);
    expect(rollup.spent.spawns).toBe(2);
    expect(rollup.spent.tokens).toBeGreaterThan(0);
    expect(rollup.budget!.remaining.turns).toBe(10 - rollup.spent.turns);
    expect(Date.parse(rollup.endedAt!)).toBeGreaterThan(Date.parse(rollup.startedAt!));

    const waterfall = (await (await get(`/api/ui/trees/${encodeURIComponent(root.threadId)}/waterfall`)).json()) as TreeWaterfall;
    expect(waterfall.rootThreadId).toBe(root.threadId);
    expect(waterfall.threads.map((t) => [t.title, t.depth])).toEqual([["Root", 0], ["First", 1], ["Second", 1]]);
    const [rootRow, first, secondRow] = waterfall.threads as [TreeWaterfall["threads"][number], TreeWaterfall["threads"][number], TreeWaterfall["threads"][number]];
    expect(first.parentThreadId).toBe(root.threadId);
    expect(rootRow.runs[0]).toMatchObject({ runId: root.runId, status: "completed", endReason: "completed" });
    // The root's agent blocked in delegate_task's wait for the second child: a recorded wait on its run.
    expect(rootRow.runs[0]!.waits.length).toBeGreaterThanOrEqual(1);
    expect(rootRow.runs[0]!.waits[0]!.endedAt).not.toBeNull();
    const approval = secondRow.runs[0]!.requests[0]!;
    expect(approval).toMatchObject({ requestId: second.id, category: "approval", kind: "command", status: "resolved", outcome: "accept" });
    expect(Date.parse(approval.resolvedAt!)).toBeGreaterThanOrEqual(Date.parse(approval.createdAt));
    // The two children ran at the same time.
    const [a, b] = [first.runs[0]!, secondRow.runs[0]!];
    expect(Date.parse(a.startedAt!)).toBeLessThan(Date.parse(b.endedAt!));
    expect(Date.parse(b.startedAt!)).toBeLessThan(Date.parse(a.endedAt!));
    expect(waterfall.endedAt).not.toBeNull();
  }, 60_000);
});
