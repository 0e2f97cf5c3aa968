import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { type Run, type RunAttempt, RunKind } from "../../contracts/entities/runs.js";
import { toDomainEvent } from "../../contracts/events.js";
import { type BudgetHolder, taskHolder, threadHolder, workflowHolder } from "../../core/budgets/budgets.js";
import { evolve, initialState } from "../../core/state.js";
import { checkBudgets, reachedPools } from "./budgetLedger.js";
import { runSeed } from "./runner.js";

/**
 * The tokens half of budgets-never-exceeded, on a real history: a seed whose
 * pool reached its tokens limit passes as it is, and fails once a run that
 * was not running then is made to report more usage afterwards.
 */

function lastAttemptEvent(log: readonly StoredEvent[], runId: string): StoredEvent | undefined {
  return log.findLast((event) => event.type === "run-attempt.updated" && (event.data as { attempt: RunAttempt }).attempt.runId === runId);
}

/**
 * The pools still in force when the log ends, keyed as reachedPools keys
 * them (less the kind): usage planted at the end counts only against those
 * (a pool whose budget was cleared or replaced later holds no later usage).
 */
function poolsInForce(log: readonly StoredEvent[]): ReadonlySet<string> {
  const state = initialState();
  for (const event of log) evolve(state, toDomainEvent(event));
  const holders = [
    ...[...state.threads.values()].filter((thread) => thread.lineage.parentThreadId === null).map(threadHolder),
    ...[...state.tasks.values()].filter((task) => task.budget !== undefined && task.budget !== null).map(taskHolder),
    ...[...state.workflows.values()].map((workflow) => workflowHolder(state, workflow)),
  ].filter((holder): holder is BudgetHolder => holder !== null);
  return new Set(holders.map((holder) => `${holder.kind}:${holder.id}:${holder.since}:${JSON.stringify(holder.budget)}`));
}

function runKind(log: readonly StoredEvent[], runId: string): Run["kind"] | undefined {
  const event = log.findLast((candidate) => (candidate.type === "run.created" || candidate.type === "run.updated") && (candidate.data as { run: Run }).run.id === runId);
  return event === undefined ? undefined : (event.data as { run: Run }).run.kind;
}

describe("budgets-never-exceeded, tokens and cost", () => {
  it("flags usage added after a pool was reached by a run that was not running then", async () => {
    let planted: { log: StoredEvent[]; runId: string; pool: string } | null = null;
    for (let seed = 1; seed <= 40 && planted === null; seed++) {
      const result = await runSeed({ seed });
      if (result.violations.length > 0) continue;
      expect(checkBudgets(result.log)).toEqual([]);
      const inForce = poolsInForce(result.log);
      for (const [pool, reach] of reachedPools(result.log)) {
        if (!pool.endsWith(":tokens") || !inForce.has(pool.slice(0, -":tokens".length))) continue;
        // A system follow-up (a notice) may add to a spent pool by design: the planted usage goes to another run.
        const runId = [...reach.frozen.keys()].find((id) => lastAttemptEvent(result.log, id) !== undefined && runKind(result.log, id) !== RunKind.systemFollowUp);
        if (runId === undefined) continue;
        const event = lastAttemptEvent(result.log, runId)!;
        const attempt = (event.data as { attempt: RunAttempt }).attempt;
        const usage = attempt.usage ?? { inputTokens: 0, outputTokens: 0, cachedInputTokens: null, reasoningOutputTokens: null, costUsd: null };
        const late: StoredEvent = {
          ...event,
          sequence: result.log.length + 1,
          eventId: "event:planted-late-usage",
          commandId: "cmd:planted-late-usage",
          data: { attempt: { ...attempt, usage: { ...usage, inputTokens: usage.inputTokens + 500 } } },
        };
        planted = { log: [...result.log, late], runId, pool };
        break;
      }
    }
    expect(planted, "no seed in 1-40 reached a tokens pool with a run that had ended").not.toBeNull();
    const problems = checkBudgets(planted!.log);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`run ${planted!.runId} added 500 tokens`);
    expect(problems[0]).toContain("though it was not running then");
  });
});
