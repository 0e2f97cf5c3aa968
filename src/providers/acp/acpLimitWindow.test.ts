import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CapabilitiesOutput } from "../../contracts/tools/threadTools.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

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
    expect(notices).toEqual([expect.objectContaining({ level: "warning", text: expect.stringMatching(new RegExp(`^usage limit reached \\(resets at ${resetAt.replaceAll(".", "\\.")}\\)`)) })]);

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
  });
});
