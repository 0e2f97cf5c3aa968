import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { createPiDriver } from "./driver.js";
import { installFakePi } from "./testing/fakePi.js";

/**
 * The pi driver against the fake `pi --mode rpc` (testing/fakePi.ts): the
 * driver's real process, JSONL transport, mapping, dialog (approval) and
 * lifecycle code, with a small Node script answering Pi's RPC. The fake
 * answers a steer, an abort and a dialog response by itself, so the harness
 * checks that what the suite sent reached it.
 */

const harness: DriverContractHarness = {
  async open(recorder) {
    const dir = await mkdtemp(join(tmpdir(), "loom-pi-contract-"));
    const fake = installFakePi(dir);
    const driver = createPiDriver({ stateDir: dir, packageCli: () => null, interruptGraceMs: 10_000 });
    const instance: ProviderInstanceConfig = { id: "pi", driver: "pi", enabled: true, displayName: null, models: null, options: { binaryPath: fake.binary, env: { FAKE_PI_LOG: fake.logFile } } };
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
    const commands = (type: string) => fake.logEntries().filter((entry) => entry.command?.type === type);
    return {
      session,
      capabilities: driver.capabilities(instance),
      startCompletingTurn: (runId) => session.startTurn({ runId, input: "hello" }),
      startOpenTurn: (runId) => session.startTurn({ runId, input: "hang" }),
      finishSteeredTurn: (_runId, text) => {
        if (commands("steer").at(-1)?.command?.message !== text) throw new Error(`steer did not carry ${text}`);
        return Promise.resolve();
      },
      afterInterrupt: () => {
        if (commands("abort").length !== 1) throw new Error("abort did not reach pi");
        return Promise.resolve();
      },
      startAskingTurn: (runId) => session.startTurn({ runId, input: "ask" }),
      afterAnswer: async (runId) => {
        await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === "confirmed: true", "the fake's echo of the confirmation");
      },
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

describeDriverContract("pi (fake rpc process)", harness);
