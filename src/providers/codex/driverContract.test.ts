import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { createCodexDriver } from "./driver.js";
import { installFakeCodex } from "./testing/fakeAppServer.js";

/**
 * The codex driver against the fake app-server (testing/fakeAppServer.ts):
 * the driver's real process, transport, approvals and lifecycle code, with
 * a small Node script answering the JSON-RPC in place of codex. The fake
 * answers a steer, an interrupt and an approval decision by itself, so the
 * harness only checks that what the suite sent reached it.
 */

const harness: DriverContractHarness = {
  async open(recorder) {
    const dir = await mkdtemp(join(tmpdir(), "loom-codex-contract-"));
    const fake = installFakeCodex(dir);
    const driver = createCodexDriver({ packageLauncher: () => null, interruptGraceMs: 10_000 });
    const instance: ProviderInstanceConfig = {
      id: "codex",
      driver: "codex",
      enabled: true,
      displayName: null,
      models: null,
      options: {
        binaryPath: fake.binary,
        modelProvider: { id: "local", baseUrl: "http://127.0.0.1:1/v1", envKey: "LOOM_MODEL_KEY" },
        env: { LOOM_MODEL_KEY: "dummy", FAKE_CODEX_LOG: fake.logFile },
      },
    };
    const session = await driver.openSession({
      instance,
      threadId: "thread:contract",
      providerSessionId: "provider-session:contract",
      cwd: dir,
      runtimeMode: "approval-required",
      interactionMode: "default",
      model: null,
      mcp: { url: "http://127.0.0.1:1/mcp", token: "tok_contract_0123456789" },
      onEvent: recorder.onEvent,
    });
    const received = (method: string) => fake.logEntries().filter((entry) => entry.message?.method === method);
    return {
      session,
      capabilities: driver.capabilities(instance),
      startCompletingTurn: (runId) => session.startTurn({ runId, input: "hello" }),
      startOpenTurn: (runId) => session.startTurn({ runId, input: "hang" }),
      finishSteeredTurn: (_runId, text) => {
        // The fake ends the turn with "steered: <text>" when the steer arrives.
        const steer = received("turn/steer").at(-1);
        if (JSON.stringify(steer?.message?.params?.input) !== JSON.stringify([{ type: "text", text, text_elements: [] }])) throw new Error(`turn/steer did not carry ${text}`);
        return Promise.resolve();
      },
      afterInterrupt: () => {
        if (received("turn/interrupt").length !== 1) throw new Error("turn/interrupt did not reach app-server");
        return Promise.resolve();
      },
      startAskingTurn: (runId) => session.startTurn({ runId, input: "approve" }),
      afterAnswer: async (runId) => {
        // The fake echoes the JSON-RPC result it received for its approval request.
        await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === 'decision: {"decision":"accept"}', "the fake's echo of the decision");
      },
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

describeDriverContract("codex (fake app-server)", harness);
