import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ThreadConfigureOutput } from "../../contracts/tools/configurationTools.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { limitMoveText } from "./limitView.js";

/**
 * Switch now (docs/limits.md, "Failover") inside a real Loom server: a real
 * ACP agent process (the scripted agent) fails its prompt on a usage limit
 * with a reset time an hour ahead; t3_thread_configure moves the waiting
 * thread to the scripted instance, and its work goes on there at once with
 * the thread's context handed over. An instance with a failover list moves
 * a delegated child's work by itself as the limit stops it, and the parent's
 * wait ends on the result from the other instance. An outage (a 503 on
 * every try, past Loom's retries) moves a child's work the same way.
 */

let agent: ScriptedAgentSetup;
let loom: LoomHarness;

beforeEach(async () => {
  agent = scriptedAgentSetup();
  const acp = agent.instance({ id: "acp", driver: "acp" });
  loom = await LoomHarness.start({
    config: {
      providers: [
        { id: "acp", driver: "acp", options: acp.options },
        { id: "moving", driver: "acp", options: acp.options, failover: ["acp", "scripted"] },
        { id: "flaky", driver: "acp", options: acp.options, failover: ["scripted"] },
        { id: "scripted", driver: "scripted" },
      ],
    },
  });
});

afterEach(async () => {
  await loom.close();
  agent.close();
});

describe("switch now", () => {
  it("moves a thread waiting on a usage limit to another instance, continues its work there, and refuses what it cannot do", async () => {
    const resetAt = new Date(Date.now() + 3_600_000).toISOString();
    const limited = await loom.launch({ message: acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } }), title: "limited", target: { providerInstanceId: "acp" } });
    expect((await loom.waitForEnd(limited.runId!, 20_000)).status, dump(loom, limited.threadId)).toBe("failed");
    const recovery = await loom.until(() => loom.state.threads.get(limited.threadId)?.limitRecovery, "the limit recovery recorded");
    expect(recovery).toMatchObject({ runId: limited.runId, resetAt, autoResume: true });

    // No failover list and no instance named: nowhere to go, and nothing changes.
    const nowhere = await loom.owner.call("t3_thread_configure", { threadId: limited.threadId, failOver: true });
    expect([nowhere.errorCode, nowhere.errorMessage]).toEqual(["provider_unavailable", `thread ${limited.threadId} has no failover instance: name one with providerInstanceId, or configure the instance's failover list`]);
    const mixed = await loom.owner.call("t3_thread_configure", { threadId: limited.threadId, failOver: true, providerInstanceId: "scripted", runtimeMode: "approval-required" });
    expect(mixed.errorCode).toBe("invalid_request");
    expect(loom.state.threads.get(limited.threadId)?.limitRecovery).toEqual(recovery);

    const moved = await loom.owner.ok<ThreadConfigureOutput>("t3_thread_configure", { threadId: limited.threadId, providerInstanceId: "scripted" });
    expect(moved).toMatchObject({ providerInstanceId: "scripted", changed: ["provider"] });
    const runs = await loom.until(() => (loom.runs(limited.threadId).length === 2 ? loom.runs(limited.threadId) : null), "the follow-up run on scripted");
    expect(runs[1]).toMatchObject({ kind: "system_follow_up", providerInstanceId: "scripted" });
    expect((await loom.waitForEnd(runs[1]!.id, 20_000)).status, dump(loom, limited.threadId)).toBe("completed");
    const thread = loom.state.threads.get(limited.threadId)!;
    expect(thread.limitRecovery ?? null).toBeNull();
    expect(thread.snoozedUntil).toBeNull();
    const items = loom.items(limited.threadId);
    expect(items.find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "acp", toProvider: "scripted" });
    expect(items.filter((item) => item.type === "system_notice").at(-1)).toMatchObject({ text: `Moved to scripted on request, instead of waiting for acp's usage limit (it resets at ${resetAt}).` });
    // Once moved, the thread waits on no limit: a second switch is refused.
    const again = await loom.owner.call("t3_thread_configure", { threadId: limited.threadId, failOver: true });
    expect([again.errorCode, again.errorMessage]).toEqual(["invalid_request", `thread ${limited.threadId} is not waiting on a usage limit: move it with providerInstanceId alone`]);
  });

  it("moves a delegated child's work by itself to the first available failover instance, and the parent gets the result from there", async () => {
    const resetAt = new Date(Date.now() + 3_600_000).toISOString();
    const child = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
    // The acp instance is limited first, so the failover list passes it over for scripted.
    const first = await loom.launch({ message: child, title: "limits acp", target: { providerInstanceId: "acp" } });
    expect((await loom.waitForEnd(first.runId!, 20_000)).status).toBe("failed");
    const parent = await loom.launch({
      message: script({ call: "delegate_task", args: { task: child, target: { providerInstanceId: "moving" }, mode: "wait", timeoutMs: 60_000 }, as: "task" }, { say: "{{task.status}} on {{task.providerInstanceId}}" }),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await loom.waitForEnd(parent.runId!, 60_000), dump(loom, parent.threadId)).toMatchObject({ status: "completed" });
    expect(loom.assistantTexts(parent.threadId).at(-1)).toBe("completed on scripted");
    const [task] = [...loom.state.tasks.values()].filter((t) => t.parentThreadId === parent.threadId);
    const runs = loom.runs(task!.childThreadId);
    expect(runs.map((run) => [run.kind, run.status, run.providerInstanceId])).toEqual([
      ["delegated_task", "failed", "moving"],
      ["system_follow_up", "completed", "scripted"],
    ]);
    const items = loom.items(task!.childThreadId);
    expect(items.find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "moving", toProvider: "scripted", status: "ready" });
    expect(items.some((item) => item.type === "system_notice" && item.text === `Moved to scripted after moving's usage limit (it resets at ${resetAt}).`)).toBe(true);
    // The tree's line says where the work went while the run continuing it is the thread's latest.
    expect(limitMoveText(loom.state, loom.state.threads.get(task!.childThreadId)!)).toBe(`moved to scripted after moving's usage limit (it resets at ${resetAt})`);
    expect(limitMoveText(loom.state, loom.state.threads.get(first.threadId)!)).toBeNull();
    expect(loom.state.threads.get(task!.childThreadId)?.limitRecovery ?? null).toBeNull();
  });

  it("moves a child's work after an outage outlasted Loom's retries, and the parent gets the result from there", async () => {
    const child = acpScript({ fail: { code: -32603, message: "Service unavailable", data: { status: 503 } } });
    const parent = await loom.launch({
      message: script({ call: "delegate_task", args: { task: child, target: { providerInstanceId: "flaky" }, mode: "wait", timeoutMs: 60_000 }, as: "task" }, { say: "{{task.status}} on {{task.providerInstanceId}}" }),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await loom.waitForEnd(parent.runId!, 60_000), dump(loom, parent.threadId)).toMatchObject({ status: "completed" });
    expect(loom.assistantTexts(parent.threadId).at(-1)).toBe("completed on scripted");
    const [task] = [...loom.state.tasks.values()].filter((t) => t.parentThreadId === parent.threadId);
    const runs = loom.runs(task!.childThreadId);
    expect(runs.map((run) => [run.kind, run.status, run.providerInstanceId])).toEqual([
      ["delegated_task", "failed", "flaky"],
      ["system_follow_up", "completed", "scripted"],
    ]);
    // Every try of the first run met the 503: the first and Loom's 3 retries.
    expect(agent.requests().filter((request) => request.method === "session/prompt").length).toBe(4);
    const notices = loom.items(task!.childThreadId).flatMap((item) => (item.type === "system_notice" ? [item.text] : []));
    expect(notices.filter((text) => text.startsWith("Retrying the turn after an overloaded provider"))).toHaveLength(3);
    const stop = notices.find((text) => text.startsWith("Stopped by provider errors past Loom's retries"));
    const retryAt = /tried here again at (\S+)\.$/.exec(stop ?? "")?.[1];
    expect(retryAt, notices.join("\n")).toBeDefined();
    expect(notices).toContain(`Moved to scripted after flaky's errors past Loom's retries (tried again at ${retryAt}).`);
    expect(loom.items(task!.childThreadId).find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "flaky", toProvider: "scripted", status: "ready" });
    expect(loom.state.threads.get(task!.childThreadId)?.limitRecovery ?? null).toBeNull();
  }, 60_000);
});
