import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { createOpencodeDriver } from "./driver.js";
import { fakeOpencode } from "./testing/fakeOpencodeServer.js";

/**
 * The opencode driver against the fake OpenCode server
 * (testing/fakeOpencodeServer.ts): the driver's real SDK client, SSE event
 * stream, mapping, approvals and lifecycle code, with an in-process HTTP
 * server answering OpenCode's API in place of `opencode serve`. The fake
 * answers a steer, an abort and a permission reply by itself, so the
 * harness checks that what the suite sent reached it.
 */

const harness: DriverContractHarness = {
  async open(recorder) {
    const dir = await mkdtemp(join(tmpdir(), "loom-opencode-contract-"));
    const fake = fakeOpencode();
    const driver = createOpencodeDriver({ launch: fake.launch, packageBinary: () => null, interruptGraceMs: 10_000 });
    const instance: ProviderInstanceConfig = { id: "opencode", driver: "opencode", enabled: true, displayName: null, models: ["loom/m"], options: { binaryPath: "/fake/opencode", startupTimeoutMs: 10_000 } };
    const session = await driver.openSession({
      instance,
      threadId: "thread:contract",
      providerSessionId: "provider-session:contract",
      cwd: dir,
      runtimeMode: "approval-required",
      interactionMode: "default",
      model: "loom/m",
      mcp: { url: "http://127.0.0.1:1/mcp", token: "tok_contract_0123456789" },
      onEvent: recorder.onEvent,
    });
    const prompts = (): string[] => fake.requests.filter((r) => r.path.endsWith("/prompt_async")).map((r) => (r.body as { parts: { text: string }[] }).parts[0]?.text ?? "");
    return {
      session,
      capabilities: driver.capabilities(instance),
      startCompletingTurn: (runId) => session.startTurn({ runId, input: "hello" }),
      startOpenTurn: (runId) => session.startTurn({ runId, input: "hang" }),
      finishSteeredTurn: async (runId, text) => {
        if (prompts().at(-1) !== text) throw new Error(`the steer did not reach OpenCode as a prompt: ${JSON.stringify(prompts())}`);
        await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === `steered: ${text}`, "the fake's answer to the steer");
      },
      afterInterrupt: () => {
        if (!fake.requests.some((r) => r.path.endsWith("/abort"))) throw new Error("session.abort did not reach OpenCode");
        return Promise.resolve();
      },
      startAskingTurn: (runId) => session.startTurn({ runId, input: "ask" }),
      afterAnswer: async (runId) => {
        await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === "decision: once", "the fake's echo of the reply");
      },
      afterStop: () => {
        fake.push({ type: "message.part.updated", properties: { sessionID: "ses_fake", time: 9, part: { id: "prt_late", sessionID: "ses_fake", messageID: "msg_late", type: "text", text: "late", time: { start: 1, end: 2 } } } });
        return Promise.resolve();
      },
      dispose: async () => {
        await fake.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
};

describeDriverContract("opencode (fake server)", harness);
