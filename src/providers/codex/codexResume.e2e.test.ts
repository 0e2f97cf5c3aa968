import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";

/**
 * Memory across a Loom restart with the real codex 0.171.0 against the
 * scripted model server: the thread's second turn, after the restart, runs in
 * a new app-server process that resumes the codex thread (thread/resume) from
 * the CODEX_HOME Loom keeps for the thread under its state dir, so the model
 * request of that turn carries the first turn's message and answer. Loom
 * hands it no recap: the conversation is codex's own.
 */

const TURN_MS = 90_000;
const MODEL = "loom-test-model";

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  model.setRules([{ reply: { text: "noted: {{lastUser}}" } }]);
  harness = await LoomHarness.start({
    config: {
      providers: [
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

describe("codex memory across restarts", () => {
  it(
    "the turn after a Loom restart resumes the codex thread and its model request carries the first turn",
    async () => {
      const launched = await harness.launch({ message: "The code word is PLUM-42.", title: "codex memory", target: { providerInstanceId: "codex" } });
      const first = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(first.status, JSON.stringify(harness.items(launched.threadId))).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toContain("PLUM-42");
      const requestsBefore = model.requests.length;

      harness = await harness.restart();
      const sent = await harness.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "What was the code word?" });
      const second = await harness.waitForEnd(sent.runId, TURN_MS);
      expect(second.status, JSON.stringify(harness.items(launched.threadId))).toBe("completed");
      expect(harness.server.sessions.held()).toMatchObject([{ threadId: launched.threadId, driver: "codex", resumed: true }]);

      const after = model.requests.slice(requestsBefore).filter((request) => request.normalized !== undefined);
      const asked = after.find((request) => JSON.stringify(request.body).includes("What was the code word?"));
      expect(asked, "a model request of the second turn").toBeDefined();
      const body = JSON.stringify(asked!.body);
      // The first turn's message and the model's answer to it, from codex's own record.
      expect(body).toContain("The code word is PLUM-42.");
      expect(body).toContain("noted: The code word is PLUM-42.");
      expect(body).not.toContain("<loom_context>");
    },
    TURN_MS * 3,
  );
});
