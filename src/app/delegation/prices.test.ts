import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costOf } from "../../core/budgets/prices.js";
import { delegateStep, launchParent, onlyTask, waitForResult } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * Cost from configured prices (docs/budgets.md, "Cost"): the scripted
 * driver reports tokens (one per 4 characters) and no cost unless told, so
 * each run's cost is computed from its instance's price list: the model's
 * own price, else the list's `*`. A provider's own cost wins over the list.
 * The tree's spend against a costUsd budget sums those costs.
 */

const PRICES = {
  parent: { "*": { inputPerMTok: 1_000, outputPerMTok: 3_000 } },
  child: { "b-1": { inputPerMTok: 500, outputPerMTok: 1_500, cachedInputPerMTok: 50 }, "*": { inputPerMTok: 99_999, outputPerMTok: 99_999 } },
};

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({
    config: {
      providers: [
        { id: "a", driver: "scripted", prices: PRICES.parent },
        { id: "b", driver: "scripted", models: ["b-1"], prices: PRICES.child },
        { id: "reports", driver: "scripted", options: { costPerTokenUsd: 0.5 }, prices: PRICES.parent },
      ],
    },
  });
});
afterAll(async () => {
  await h.close();
});

function attemptUsage(runId: string) {
  const ids = h.state.runAttempts.get(runId) ?? [];
  return ids.map((id) => h.state.attempts.get(id)!.usage!);
}

describe("cost from configured prices", () => {
  it("prices each run by its instance's list (the model's own entry, else `*`) and sums the tree against a costUsd budget", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "x".repeat(40) }], { target: { providerInstanceId: "b", model: "b-1" }, budget: { costUsd: 5 } }, "t"), { say: "sent" }]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const [parentUsage] = attemptUsage(parent.runId);
    expect(parentUsage!.costUsd).toBeCloseTo(costOf(parentUsage!, PRICES.parent["*"]), 12);
    expect(parentUsage!.costUsd).toBeGreaterThan(0);

    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId, 20_000);
    const [childUsage] = attemptUsage(task.childRunId!);
    // The child's model is priced by its own entry, not the list's `*`.
    expect(childUsage!.costUsd).toBeCloseTo(costOf(childUsage!, PRICES.child["b-1"]), 12);
    expect(childUsage!.costUsd).toBeCloseTo(((childUsage!.inputTokens * 500) + childUsage!.outputTokens * 1_500) / 1e6, 12);
    const status = await h.owner.ok<{ budget: { spent: { costUsd: number }; remaining: { costUsd: number } } }>("task_status", { taskId: task.taskId });
    expect(status.budget.spent.costUsd).toBeCloseTo(childUsage!.costUsd!, 12);
    expect(status.budget.remaining.costUsd).toBeCloseTo(5 - childUsage!.costUsd!, 12);
  });

  it("keeps a provider's own reported cost over the price list", async () => {
    const launched = await h.launch({ title: "reports its cost", message: script({ say: "hello there" }), target: { providerInstanceId: "reports" } });
    await h.waitViaMcp(launched.threadId, launched.runId!);
    const [usage] = attemptUsage(launched.runId!);
    expect(usage!.costUsd).toBeCloseTo((usage!.inputTokens + usage!.outputTokens) * 0.5, 9);
  });
});
