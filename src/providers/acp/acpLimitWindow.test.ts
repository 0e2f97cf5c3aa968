import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CapabilitiesOutput } from "../../contracts/tools/threadTools.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { limitStopNotice } from "../../core/run/limitRecovery.js";

/**
 * A usage limit inside a real Loom server: a real ACP agent process (the
 * scripted agent) fails its prompt on a model API's usage limit with a reset
 * time; Loom records the limit on the run, orchestrator_capabilities lists
 * the instance unavailable until the reset, and a delegate_task to it
 * answers provider_unavailable saying why.
 */

let agent: ScriptedAgentSetup;
let loom: LoomHarness;

beforeEach(async () => {
  agent = scriptedAgentSetup();
  const acp = agent.instance({ id: "acp", driver: "acp" });
  loom = await LoomHarness.start({ config: { providers: [{ id: "acp", driver: "acp", options: acp.options }, { id: "scripted", driver: "scripted" }] } });
});

afterEach(async () => {
  await loom.close();
  agent.close();
});

describe("a provider's usage limit", () => {
  it("makes its instance unavailable until the reset: orchestrator_capabilities says so and delegate_task answers provider_unavailable", async () => {
    // An hour ahead of the server's clock, so the window is still open when the test reads it.
    const resetAt = new Date(Date.now() + 3_600_000).toISOString();
    const failing = acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } });
    const limited = await loom.launch({ message: failing, title: "limited", target: { providerInstanceId: "acp" } });
    const run = await loom.waitForEnd(limited.runId!, 20_000);
    expect(run.status, dump(loom, limited.threadId)).toBe("failed");
    const notices = loom.items(limited.threadId).filter((item) => item.type === "system_notice");
    expect(notices).toEqual([
      expect.objectContaining({ level: "warning", text: expect.stringMatching(new RegExp(`^usage limit reached \\(resets at ${resetAt.replaceAll(".", "\\.")}\\)`)) }),
      // The run stopped on the limit: the thread waits for the reset and resumes by itself (docs/limits.md).
      expect.objectContaining({ level: "warning", text: limitStopNotice({ resetAt, autoResume: true }) }),
    ]);

    const capabilities = (await loom.owner.call("orchestrator_capabilities", {})).structured as CapabilitiesOutput;
    const acp = capabilities.providers.find((provider) => provider.providerInstanceId === "acp");
    expect(acp).toMatchObject({ available: false, canRunChildTasks: false, limitResetAt: resetAt, reason: expect.stringContaining(`usage limit reached, resets at ${resetAt}`) });
    expect(capabilities.providers.find((provider) => provider.providerInstanceId === "scripted")).toMatchObject({ available: true });

    const parent = await loom.launch({
      message: script({ call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "acp" }, mode: "async" }, as: "task" }, { say: "{{task.error.code}}: {{task.error.message}}" }),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await loom.waitForEnd(parent.runId!, 20_000), dump(loom, parent.threadId)).toMatchObject({ status: "completed" });
    expect(loom.assistantTexts(parent.threadId).at(-1)).toMatch(new RegExp(`^provider_unavailable: acp is unavailable: usage limit reached, resets at ${resetAt.replaceAll(".", "\\.")}`));
    expect([...loom.state.tasks.values()].filter((task) => task.parentThreadId === parent.threadId)).toEqual([]);

    // With fallbacks, the same delegation starts on the first one available, and the child's timeline says why.
    const withFallback = await loom.launch({
      message: script(
        { call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "acp", fallbacks: [{ providerInstanceId: "scripted" }] }, mode: "wait" }, as: "task" },
        { say: "{{task.status}} on {{task.providerInstanceId}}" },
      ),
      title: "parent with a fallback",
      target: { providerInstanceId: "scripted" },
    });
    expect(await loom.waitForEnd(withFallback.runId!, 20_000), dump(loom, withFallback.threadId)).toMatchObject({ status: "completed" });
    expect(loom.assistantTexts(withFallback.threadId).at(-1)).toBe("completed on scripted");
    const [task] = [...loom.state.tasks.values()].filter((t) => t.parentThreadId === withFallback.threadId);
    expect(task).toMatchObject({ providerInstanceId: "scripted", status: "completed" });
    expect(loom.items(task!.childThreadId).filter((item) => item.type === "system_notice")).toEqual([
      expect.objectContaining({ level: "warning", text: expect.stringMatching(new RegExp(`^Started on scripted instead of acp: usage limit reached, resets at ${resetAt.replaceAll(".", "\\.")}`)) }),
    ]);
  });
});

describe("an instance's failover list", () => {
  let failover: LoomHarness;
  afterEach(async () => failover.close());

  it("starts a delegation on the next available instance when the one asked for is unavailable, and names each reason when none is", async () => {
    const acp = agent.instance({ id: "acp", driver: "acp" });
    failover = await LoomHarness.start({
      config: {
        providers: [
          { id: "acp", driver: "acp", options: acp.options, failover: ["off", "scripted"] },
          { id: "off", driver: "scripted", enabled: false },
          { id: "scripted", driver: "scripted" },
          { id: "lonely", driver: "scripted", enabled: false, failover: ["off"] },
        ],
      },
    });
    const resetAt = new Date(Date.now() + 3_600_000).toISOString();
    const limited = await failover.launch({ message: acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt } } }), title: "limited", target: { providerInstanceId: "acp" } });
    expect((await failover.waitForEnd(limited.runId!, 20_000)).status).toBe("failed");

    const parent = await failover.launch({
      message: script(
        { call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "acp" }, mode: "wait" }, as: "task" },
        { call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "lonely" }, mode: "async" }, as: "none" },
        { say: "{{task.status}} on {{task.providerInstanceId}}; {{none.error.code}}: {{none.error.message}}" },
      ),
      title: "parent",
      target: { providerInstanceId: "scripted" },
    });
    expect(await failover.waitForEnd(parent.runId!, 20_000), dump(failover, parent.threadId)).toMatchObject({ status: "completed" });
    expect(failover.assistantTexts(parent.threadId).at(-1)).toBe("completed on scripted; provider_unavailable: lonely is unavailable: disabled in config; off is unavailable: disabled in config");
    const [task] = [...failover.state.tasks.values()].filter((t) => t.parentThreadId === parent.threadId);
    expect(failover.items(task!.childThreadId).find((item) => item.type === "system_notice")).toMatchObject({ text: expect.stringContaining("Started on scripted instead of acp: usage limit reached") });
  });
});
