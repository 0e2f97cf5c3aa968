import type { ProviderInstanceConfig } from "../../config/config.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { createCursorDriver } from "./driver.js";
import { fakeCursorSdk } from "./testing/fakeCursorSdk.js";

/**
 * The cursor driver at the SDK boundary: Cursor's agent runs its model on
 * Cursor's backend and cannot run offline, so the suite drives the driver's
 * real options, mapping, question tool and lifecycle code against a fake of
 * @cursor/sdk's public interface built from its published types
 * (testing/fakeCursorSdk.ts). cursor.e2e.test.ts runs the real SDK when
 * CURSOR_API_KEY is set.
 */

const harness: DriverContractHarness = {
  async open(recorder) {
    const fake = fakeCursorSdk();
    const driver = createCursorDriver({ loadSdk: () => Promise.resolve(fake.sdk), processEnv: { CURSOR_API_KEY: "key_contract_0123456789" } });
    const instance: ProviderInstanceConfig = { id: "cursor", driver: "cursor", enabled: true, displayName: null, models: null, options: {} };
    const session = await driver.openSession({
      instance,
      threadId: "thread:contract",
      providerSessionId: "provider-session:contract",
      cwd: "/work",
      runtimeMode: "full-access",
      interactionMode: "default",
      model: null,
      mcp: { url: "http://127.0.0.1:1/mcp", token: "tok_contract_0123456789" },
      onEvent: recorder.onEvent,
    });
    return {
      session,
      capabilities: driver.capabilities(instance),
      startCompletingTurn: (runId) => session.startTurn({ runId, input: "hello" }),
      startOpenTurn: (runId) => session.startTurn({ runId, input: "hang" }),
      finishSteeredTurn: (_runId, text) => {
        if (fake.steers.at(-1) !== text) throw new Error(`run.steer did not get ${text}`);
        return Promise.resolve();
      },
      afterInterrupt: () => {
        if (fake.cancels.length !== 1) throw new Error("run.cancel was not called");
        return Promise.resolve();
      },
      startAskingTurn: (runId) => session.startTurn({ runId, input: "ask" }),
      afterAnswer: async (runId) => {
        await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === "answer: Proceed? → yes", "the fake's echo of the answer");
      },
      dispose: () => Promise.resolve(),
    };
  },
};

describeDriverContract("cursor (fake SDK boundary)", harness);
