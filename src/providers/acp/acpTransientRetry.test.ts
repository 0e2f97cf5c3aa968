import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnItem } from "../../contracts/turnItems.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { dump } from "../../testkit/agentHarness.js";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * Loom's retry of a turn a rate limit failed, inside a real Loom server with
 * a real ACP agent process (the scripted agent), whose prompt fails with a
 * 429 that asks to wait a minute: the retry waits for it, and an interrupt
 * during that wait ends the run at once (no provider turn runs to stop).
 */

let agent: ScriptedAgentSetup;
let loom: LoomHarness;

beforeEach(async () => {
  agent = scriptedAgentSetup();
  const acp = agent.instance({ id: "acp", driver: "acp" });
  loom = await LoomHarness.start({ config: { providers: [{ id: "acp", driver: "acp", options: acp.options }] } });
});

afterEach(async () => {
  await loom.close();
  agent.close();
});

const notices = (threadId: string): string[] =>
  loom.items(threadId).flatMap((item: TurnItem) => (item.type === "system_notice" ? [item.text] : []));

describe("a turn a rate limit failed", () => {
  it("is retried after the provider's Retry-After, said on the run; an interrupt while it waits ends the run at once", async () => {
    const limited = acpScript({ fail: { code: -32603, message: "Too many requests", data: { status: 429, retryAfterMs: 60_000 } } });
    const launched = await loom.launch({ message: limited, title: "rate limited", target: { providerInstanceId: "acp" } });
    const runId = launched.runId!;
    await loom.until(() => notices(launched.threadId).find((text) => text.startsWith("Retrying the turn after a rate limit")), () => dump(loom, launched.threadId), 20_000);
    const retry = notices(launched.threadId).find((text) => text.startsWith("Retrying"))!;
    const seconds = Number(/in (\d+) s/.exec(retry)?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(60);
    expect(seconds).toBeLessThanOrEqual(90);
    expect(retry).toMatch(/\(retry 1 of 3\)\.$/);
    expect(loom.run(runId).status).toBe("running");
    const prompts = () => agent.requests().filter((request) => request.method === "session/prompt").length;
    expect(prompts()).toBe(1);

    await loom.owner.ok("t3_thread_interrupt", { threadId: launched.threadId, runId });
    // Ended long before the retry was due: nothing waited for a provider turn that was not there.
    expect(await loom.waitForEnd(runId, 10_000), dump(loom, launched.threadId)).toMatchObject({ status: "interrupted" });
  });
});
