import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LIMIT_RESUME_TITLE } from "../core/run/limitRecovery.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { ManualClock } from "../testkit/manualClock.js";

/**
 * Work a usage limit stopped, with real Claude Code and real codex against
 * the scripted model server: the model API answers the first request with a
 * usage limit that resets in an hour (Anthropic's `billing_error` with the
 * reset in its words; OpenAI's `usage_limit_reached` with `resets_at`, which
 * codex words as "try again at 2:27 PM"); the run fails, the thread waits
 * for the reset, and when the manual clock passes it the limit resumer
 * resumes the work once, as a follow-up run on the same CLI that completes
 * with the model's answer.
 */

const TURN_MS = 90_000;
const HOUR = 3_600_000;

let model: ModelServer;
let harness: LoomHarness;
let clock: ManualClock;

beforeEach(async () => {
  model = await startModelServer();
  clock = new ManualClock(Date.now());
  harness = await LoomHarness.start({
    config: {
      providers: [
        { id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        {
          id: "codex",
          driver: "codex",
          models: ["loom-test-model"],
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
      ],
    },
    clock: clock.now,
    schedulerTimers: clock.timers,
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

describe("a usage limit with real Claude Code", () => {
  it(
    "stops the run, waits for the reset, and resumes the work once after it, completing on Claude Code",
    async () => {
      const resetAt = new Date(clock.now() + HOUR).toISOString();
      model.setRules([
        { when: { api: "anthropic" }, reply: { fault: { status: 400, body: { type: "error", error: { type: "billing_error", message: `Usage limit reached for your plan; it resets at ${resetAt}.` } } } }, times: 1 },
        { reply: { text: "resumed after the reset" } },
      ]);
      const launched = await harness.launch({ message: "Answer after the limit.", title: "claude waits", target: { providerInstanceId: "claude" }, runtimeMode: "full-access" });
      const stopped = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(stopped.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("failed");
      const recovery = await harness.until(() => harness.state.threads.get(launched.threadId)?.limitRecovery, "the limit recovery", TURN_MS);
      expect(recovery).toMatchObject({ runId: launched.runId, resetAt, autoResume: true });
      expect(harness.state.threads.get(launched.threadId)?.snoozedUntil).toBe(resetAt);
      expect(harness.runs(launched.threadId)).toHaveLength(1);

      clock.advance(HOUR);
      const resumed = await harness.until(() => harness.runs(launched.threadId).find((run) => run.kind === "system_follow_up"), "the resumed run", TURN_MS);
      const ended = await harness.waitForEnd(resumed.id, TURN_MS);
      expect(ended.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, resumed.id).at(-1)).toBe("resumed after the reset");
      expect(harness.items(launched.threadId).find((item) => item.type === "notification")).toMatchObject({ title: LIMIT_RESUME_TITLE, runId: resumed.id });
      expect(harness.state.threads.get(launched.threadId)).toMatchObject({ limitRecovery: null, snoozedUntil: null });
      expect(harness.runs(launched.threadId).map((run) => run.kind)).toEqual(["user_turn", "system_follow_up"]);
    },
    TURN_MS * 2 + 30_000,
  );

  it(
    "codex: its usage limit's reset comes from its own words, the thread waits for it, and the work resumes once after it on codex",
    async () => {
      const resetsAt = Math.floor(clock.now() / 1000) + HOUR / 1000;
      model.setRules([
        { when: { api: "responses" }, reply: { fault: { status: 429, body: { error: { type: "usage_limit_reached", message: "The usage limit has been reached", resets_at: resetsAt, resets_in_seconds: HOUR / 1000 } } } }, times: 1 },
        { reply: { text: "resumed after the reset" } },
      ]);
      const launched = await harness.launch({ message: "Answer after the limit.", title: "codex waits", target: { providerInstanceId: "codex" }, runtimeMode: "full-access" });
      expect((await harness.waitForEnd(launched.runId!, TURN_MS)).status).toBe("failed");
      const recovery = await harness.until(() => harness.state.threads.get(launched.threadId)?.limitRecovery, "the limit recovery", TURN_MS);
      // Codex words the reset to the minute.
      expect(Math.abs(Date.parse(recovery.resetAt) - resetsAt * 1000)).toBeLessThanOrEqual(60_000);
      clock.advance(HOUR + 120_000);
      const resumed = await harness.until(() => harness.runs(launched.threadId).find((run) => run.kind === "system_follow_up"), "the resumed run", TURN_MS);
      expect(resumed.providerInstanceId).toBe("codex");
      const ended = await harness.waitForEnd(resumed.id, TURN_MS);
      expect(ended.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, resumed.id).at(-1)).toBe("resumed after the reset");
      expect(harness.runs(launched.threadId).map((run) => run.kind)).toEqual(["user_turn", "system_follow_up"]);
    },
    TURN_MS * 2 + 30_000,
  );
});
