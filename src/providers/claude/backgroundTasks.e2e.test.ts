import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";

/**
 * Real Claude Code's background Bash under Loom, against the scripted model
 * server: the model runs a command in the background, Claude Code reports the
 * task (task_started, later task_notification), and the thread's
 * pendingBackgroundTasks hold it while it runs. Read from Loom's state.
 */

const TURN_MS = 90_000;

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: { providers: [{ id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }] },
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

describe("claude background work end to end", () => {
  it(
    "a Bash command run in the background is a pending background task of the thread until Claude Code reports it settled",
    async () => {
      model.setRules([
        {
          when: { lastIsToolResult: false },
          reply: { toolCall: { tool: "Bash", arguments: { command: "sleep 3; echo finished", description: "wait a little", run_in_background: true } } },
          times: 1,
        },
        { when: { lastIsToolResult: true }, reply: { text: "started it" } },
        { reply: { text: "noted" } },
      ]);
      const launched = await harness.launch({ message: "Run it in the background.", title: "claude background", target: { providerInstanceId: "claude" }, runtimeMode: "full-access" });
      const pending = await harness.until(() => harness.state.threads.get(launched.threadId)?.pendingBackgroundTasks[0], "the background task", TURN_MS);
      expect(pending).toMatchObject({ kind: "command", runId: launched.runId, title: "wait a little" });
      expect(pending.awaited).toBeUndefined();
      // Not awaited: the turn completes while it runs.
      expect(await harness.waitForEnd(launched.runId!, TURN_MS)).toMatchObject({ status: "completed" });
      await harness.until(() => harness.state.threads.get(launched.threadId)?.pendingBackgroundTasks.length === 0, "Claude Code to report the task settled", TURN_MS);
    },
    TURN_MS * 3,
  );
});
