import type { PermissionResult, SDKMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { createClaudeDriver } from "./driver.js";
import { FakeClaude } from "./testing/fakeQuery.js";
import { loadFixture, replayFixture } from "./testing/fixtures.js";

/**
 * The claude driver with the SDK's `query()` faked (FakeClaude): Claude Code
 * cannot run without its model here, so the provider's side is played from
 * the transcripts recorded from the real SDK (fixtures/): `thinking` for a
 * turn that ends by itself, `steered`, `interrupted`, and `bash-approved`,
 * whose recorded permission request is sent through the session's real
 * canUseTool callback.
 */

const harness: DriverContractHarness = {
  async open(recorder) {
    const fake = new FakeClaude();
    const driver = createClaudeDriver({ log: () => undefined, loadQuery: () => Promise.resolve(fake.query), installationProblem: () => null });
    const instance: ProviderInstanceConfig = { id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: {} };
    const session = await driver.openSession({
      instance,
      threadId: "thread:contract",
      providerSessionId: "provider-session:contract",
      cwd: "/work",
      runtimeMode: "approval-required",
      interactionMode: "default",
      model: null,
      mcp: { url: "http://127.0.0.1:1/mcp", token: "tok_contract_0123456789" },
      onEvent: recorder.onEvent,
    });

    // Every user message the session streams (a turn's start, a steer), in order.
    let read = 0;
    const nextUserMessage = (): Promise<SDKUserMessage> => fake.last.waitForReceived(++read);
    const replay = (name: string, turnUuid: string, steerUuid?: string): SDKMessage[] =>
      replayFixture(name, { turnUuid, steerUuid, sessionId: fake.last.options.sessionId! });
    const canUseTool = () => {
      const hook = fake.last.options.canUseTool;
      if (hook === undefined) throw new Error("the session gave the SDK no canUseTool");
      return hook;
    };
    let openTurnUuid = "";
    let asked: { readonly decision: Promise<PermissionResult | null>; readonly rest: SDKMessage[] } | null = null;

    return {
      session,
      capabilities: driver.capabilities(instance),
      async startCompletingTurn(runId) {
        await session.startTurn({ runId, input: "think" });
        const sent = await nextUserMessage();
        fake.last.send(...replay("thinking", sent.uuid!));
      },
      async startOpenTurn(runId) {
        await session.startTurn({ runId, input: "nap" });
        openTurnUuid = (await nextUserMessage()).uuid!;
      },
      async finishSteeredTurn(_runId, text) {
        const steer = await nextUserMessage();
        if (steer.message.content !== text) throw new Error(`the steer streamed ${JSON.stringify(steer.message.content)}, not ${text}`);
        fake.last.send(...replay("steered", openTurnUuid, steer.uuid));
      },
      afterInterrupt() {
        if (fake.last.interrupts.length !== 1) throw new Error("Query.interrupt() was not called");
        fake.last.send(...replay("interrupted", openTurnUuid));
        return Promise.resolve();
      },
      async startAskingTurn(runId) {
        await session.startTurn({ runId, input: "say hi" });
        const sent = await nextUserMessage();
        const messages = replay("bash-approved", sent.uuid!);
        // Claude Code asks after the assistant message that makes the call, before its result.
        const call = messages.findIndex((message) => message.type === "assistant");
        fake.last.send(...messages.slice(0, call + 1));
        const [request] = loadFixture("bash-approved").permissionRequests;
        if (request === undefined) throw new Error("bash-approved recorded no permission request");
        const options = { ...request.options, signal: new AbortController().signal } as Parameters<ReturnType<typeof canUseTool>>[2];
        asked = { decision: canUseTool()(request.toolName, request.input, options), rest: messages.slice(call + 1) };
      },
      async afterAnswer() {
        if (asked === null) throw new Error("no permission request was made");
        const decision = await asked.decision;
        if (decision?.behavior !== "allow") throw new Error(`Claude was told ${JSON.stringify(decision)}`);
        fake.last.send(...asked.rest);
      },
      async afterStop() {
        // A permission request that arrives after stop is denied, and no item is emitted for it.
        const late = await canUseTool()("Bash", { command: "ls" }, { signal: new AbortController().signal, toolUseID: "late", requestId: "late" });
        if (late?.behavior !== "deny") throw new Error(`a late request got ${JSON.stringify(late)}`);
        if (!fake.last.closed) throw new Error("the query was not closed");
      },
      dispose: () => Promise.resolve(),
    };
  },
};

describeDriverContract("claude (fake query, recorded transcripts)", harness);
