import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import type { CapabilitiesOutput } from "../../contracts/tools/threadTools.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { ManualClock } from "../../testkit/manualClock.js";
import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";

/**
 * Two in-process Loom nodes on one PostgreSQL log (docs/postgres.md), each
 * with its own limit resumer on one manual clock: when the usage limit that
 * stopped a child's run resets, both nodes fire, and the work resumes once;
 * the instance's usage limit window, met on one node, holds the instance
 * unavailable on the other too. A real ACP agent process (the scripted
 * agent) meets the limit.
 */

const HOUR = 3_600_000;
const database = usePostgresDatabase();
const nodes: LoomHarness[] = [];
let agent: ScriptedAgentSetup;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  agent = scriptedAgentSetup();
  const acp = agent.instance({ id: "acp", driver: "acp" });
  const schema = `limit_resume_${process.pid}`;
  for (let i = 0; i < 2; i++) {
    nodes.push(
      await LoomHarness.start({
        config: {
          providers: [{ id: "acp", driver: "acp", options: acp.options }, { id: "other", driver: "acp", options: acp.options }, { id: "scripted", driver: "scripted" }],
          database: { url: database().url, schema },
          nodes: { heartbeatMs: 200, leaseMs: 10_000 },
        },
        clock: clock.now,
        schedulerTimers: clock.timers,
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const node of nodes.splice(0)) await node.close();
  agent.close();
});

describe("a limit reset seen by two nodes", { timeout: 60_000 }, () => {
  it("resumes the stopped work once", async () => {
    const [a, b] = nodes as [LoomHarness, LoomHarness];
    const resetAt = new Date(clock.now() + HOUR).toISOString();
    const failing = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
    const parent = await a.launch({
      message: script({ call: "delegate_task", args: { task: failing, target: { providerInstanceId: "acp" }, mode: "async" }, as: "task" }, { say: "delegated" }),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await a.waitForEnd(parent.runId!, 20_000), dump(a, parent.threadId)).toMatchObject({ status: "completed" });
    const task = [...a.state.tasks.values()].find((candidate) => candidate.parentThreadId === parent.threadId)!;
    // Both nodes fold the recovery from the shared log and arm their resumers for the reset.
    for (const node of [a, b]) await node.until(() => node.state.threads.get(task.childThreadId)?.limitRecovery, "the child's limit recovery on each node", 20_000);
    await a.until(() => clock.armed >= 2, "both limit resumers to arm");

    clock.advance(HOUR);
    const resumed = (node: LoomHarness) => node.runs(task.childThreadId).filter((run) => run.kind === "system_follow_up");
    const [run] = await a.until(() => (resumed(a).length > 0 ? resumed(a) : null), "the resumed run", 20_000);
    expect(await a.waitForEnd(run!.id, 20_000), dump(a, task.childThreadId)).toMatchObject({ status: "completed" });
    for (const node of [a, b]) await node.until(() => node.state.tasks.get(task.taskId)?.status === "completed", "the task to complete on each node", 20_000);
    // A late fire of the same reset on either node is refused, and one run resumed the work.
    for (const [node, n] of [[a, 1], [b, 2]] as const) {
      const late = await node.server.orchestrator.dispatch({ type: "thread.limit-recovery.resume", commandId: `cmd:test:late-${n}`, data: { threadId: task.childThreadId, runId: task.childRunId!, resetAt } });
      expect(late).toMatchObject({ status: "rejected", rejection: { code: "limit_recovery_stale" } });
    }
    expect(resumed(a).map((r) => r.id)).toEqual([run!.id]);
    expect(resumed(b).map((r) => r.id)).toEqual([run!.id]);
  });

  it("holds the instance unavailable on the other node until the reset, where delegate_task answers provider_unavailable", async () => {
    const [a, b] = nodes as [LoomHarness, LoomHarness];
    // Two hours ahead of both clocks (the manual one, an hour on after the test above, and the registry's own);
    // on the other instance, as the test above left acp's window open by the registry's clock.
    const resetAt = new Date(Math.max(clock.now(), Date.now()) + 2 * HOUR).toISOString();
    const failing = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
    const limited = await a.launch({ message: failing, title: "limited on a", target: { providerInstanceId: "other" } });
    expect((await a.waitForEnd(limited.runId!, 20_000)).status, dump(a, limited.threadId)).toBe("failed");
    await b.until(() => (b.state.limitWindows.get("other")?.resetAt === resetAt ? true : null), "the window in node b's state", 20_000);

    const capabilities = (await b.owner.call("orchestrator_capabilities", {})).structured as CapabilitiesOutput;
    expect(capabilities.providers.find((provider) => provider.providerInstanceId === "other")).toMatchObject({
      available: false,
      limitResetAt: resetAt,
      reason: expect.stringMatching(new RegExp(`^usage limit reached, resets at ${resetAt.replaceAll(".", "\\.")}: .*You have reached your usage limit$`)),
    });
    const parent = await b.launch({
      message: script({ call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "other" }, mode: "async" }, as: "task" }, { say: "{{task.error.code}}" }),
      title: "parent on b",
      target: { providerInstanceId: "scripted" },
    });
    expect(await b.waitForEnd(parent.runId!, 20_000), dump(b, parent.threadId)).toMatchObject({ status: "completed" });
    expect(b.assistantTexts(parent.threadId).at(-1)).toBe("provider_unavailable");
    // Recorded once, by the node whose session met it.
    const recorded = [...b.state.limitWindows.values()].filter((window) => window.resetAt === resetAt);
    expect(recorded).toEqual([expect.objectContaining({ providerInstanceId: "other", message: expect.stringContaining("You have reached your usage limit") })]);
  });
});
