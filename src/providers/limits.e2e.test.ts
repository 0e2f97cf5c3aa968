import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnItem } from "../contracts/turnItems.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";

/**
 * A model API's limits under Loom with the real agent CLIs (Claude Code,
 * codex) against the scripted model server: the server answers the first
 * request with a fault (429 with Retry-After, Anthropic's 529 overloaded):
 * Claude Code retries it by itself and the run completes with the model's
 * answer; codex (whose own retries Loom turns off for a custom endpoint)
 * ends the turn. Either way Loom records the limit as a warning notice on
 * the thread. A usage limit with a reset time on an instance with a
 * failover list moves the thread's work from Claude Code to codex. Success
 * is read from Loom's state.
 */

const TURN_MS = 90_000;
const MODEL = "loom-test-model";

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        { id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        // The same Claude Code, whose work moves to codex when a usage limit stops it.
        { id: "claude-moving", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } }, failover: ["codex"] },
        {
          id: "codex",
          driver: "codex",
          models: [MODEL],
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
      ],
    },
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

function notices(threadId: string, runId: string): string[] {
  return harness
    .items(threadId)
    .filter((item): item is Extract<TurnItem, { type: "system_notice" }> => item.runId === runId && item.type === "system_notice")
    .map((item) => item.text);
}

async function runThrough(providerInstanceId: string, title: string): Promise<{ threadId: string; runId: string }> {
  const launched = await harness.launch({ message: "Answer after the limit.", title, target: { providerInstanceId }, runtimeMode: "full-access" });
  const runId = launched.runId!;
  const run = await harness.waitForEnd(runId, TURN_MS);
  expect(run.status, JSON.stringify({ run, items: harness.items(launched.threadId) }, null, 2)).toBe("completed");
  expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toBe("answered after the limit");
  return { threadId: launched.threadId, runId };
}

describe("limits with real agent CLIs", () => {
  it(
    "Claude Code: a 429 with Retry-After is retried by the CLI, noticed on the thread, and the run completes",
    async () => {
      model.setRules([{ reply: { fault: { status: 429, retryAfterSeconds: 1 } }, times: 1 }, { reply: { text: "answered after the limit" } }]);
      const { threadId, runId } = await runThrough("claude", "claude 429");
      expect(model.requests.filter((request) => request.status === 429)).toHaveLength(1);
      expect(notices(threadId, runId)).toEqual([expect.stringMatching(/^rate limited \(retry after \d+ s, the provider is retrying\): model API rate_limit \(HTTP 429\)/)]);
    },
    TURN_MS + 30_000,
  );

  it(
    "Claude Code: a 529 overloaded is retried and noticed as overloaded",
    async () => {
      model.setRules([{ reply: { fault: { status: 529 } }, times: 1 }, { reply: { text: "answered after the limit" } }]);
      const { threadId, runId } = await runThrough("claude", "claude 529");
      expect(notices(threadId, runId)).toEqual([expect.stringMatching(/^provider overloaded \(retry after \d+ s, the provider is retrying\): model API overloaded \(HTTP 529\)/)]);
    },
    TURN_MS + 30_000,
  );

  it(
    "codex: a 429 ends the turn (Loom sets codex's own retries to 0), Loom retries it after the backoff, and the run completes",
    async () => {
      model.setRules([{ reply: { fault: { status: 429, retryAfterSeconds: 1 } }, times: 1 }, { reply: { text: "answered after the limit" } }]);
      const { threadId, runId } = await runThrough("codex", "codex 429 retried");
      expect(model.requests.filter((request) => request.status === 429)).toHaveLength(1);
      expect(notices(threadId, runId)).toEqual([expect.stringMatching(/^rate limited: .*429 Too Many Requests/), expect.stringMatching(/^Retrying the turn after a rate limit in \d+ s \(retry 1 of 3\)\.$/)]);
    },
    TURN_MS + 30_000,
  );

  it(
    "codex: a 429 on every try fails the run after Loom's 3 retries, each retry noticed",
    async () => {
      model.setRules([{ reply: { fault: { status: 429, retryAfterSeconds: 1 } } }]);
      const launched = await harness.launch({ message: "Answer after the limit.", title: "codex 429", target: { providerInstanceId: "codex" }, runtimeMode: "full-access" });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status).toBe("failed");
      const limited = expect.stringMatching(/^rate limited: .*429 Too Many Requests/);
      const retry = (n: number): unknown => expect.stringMatching(new RegExp(`^Retrying the turn after a rate limit in \\d+ s \\(retry ${n} of 3\\)\\.$`));
      expect(notices(launched.threadId, launched.runId!)).toEqual([limited, retry(1), limited, retry(2), limited, retry(3), limited]);
    },
    TURN_MS + 30_000,
  );

  it(
    "Claude Code to codex: a usage limit with a reset time stops Claude's run, and its work moves to codex at once with the thread's context and completes there",
    async () => {
      const resetAt = new Date(Date.now() + 3_600_000).toISOString();
      model.setRules([
        { when: { api: "anthropic" }, reply: { fault: { status: 400, body: { type: "error", error: { type: "billing_error", message: `Usage limit reached for your plan; it resets at ${resetAt}.` } } } } },
        { reply: { text: "answered after the failover" } },
      ]);
      const launched = await harness.launch({ message: "Answer after the limit.", title: "claude limited", target: { providerInstanceId: "claude-moving" }, runtimeMode: "full-access" });
      const stopped = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(stopped.status, JSON.stringify({ run: stopped, items: harness.items(launched.threadId) }, null, 2)).toBe("failed");
      const runs = await harness.until(() => (harness.runs(launched.threadId).length === 2 ? harness.runs(launched.threadId) : null), "the run on codex", TURN_MS);
      expect(runs[1]).toMatchObject({ kind: "system_follow_up", providerInstanceId: "codex" });
      const moved = await harness.waitForEnd(runs[1]!.id, TURN_MS);
      expect(moved.status, JSON.stringify({ run: moved, items: harness.items(launched.threadId) }, null, 2)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, runs[1]!.id).at(-1)).toBe("answered after the failover");
      const items = harness.items(launched.threadId);
      expect(items.find((item) => item.type === "handoff")).toMatchObject({ fromProvider: "claude-moving", toProvider: "codex", status: "ready" });
      expect(notices(launched.threadId, launched.runId!)).toContainEqual(expect.stringMatching(/^usage limit reached \(resets at /));
      expect(items.some((item) => item.type === "system_notice" && item.text === `Moved to codex after claude-moving's usage limit (it resets at ${resetAt}).`)).toBe(true);
      // codex was asked with the thread's context: the handoff's transcript carries Claude's turn.
      expect(model.requests.filter((request) => request.api === "anthropic" && request.status === 400).length).toBeGreaterThan(0);
      const codexAsk = model.requests.find((request) => request.api === "responses");
      expect(JSON.stringify(codexAsk)).toContain("Answer after the limit.");
    },
    TURN_MS * 2 + 30_000,
  );
});
