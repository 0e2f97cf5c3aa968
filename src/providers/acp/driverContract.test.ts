import type { ProviderDriver } from "../adapter.js";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { acpScript, scriptedAgentSetup } from "../../testkit/acpAgentHarness.js";
import { createAcpDriver, createGrokDriver } from "./driver.js";

/**
 * The acp and grok drivers against a real ACP agent process: the scripted
 * agent in testkit (acpScriptedAgent.mjs, on the official SDK's agent()
 * builder), spoken to over stdio. Nothing of the driver is faked: its
 * process, transport, mapping, approvals and lifecycle code all run. Each
 * case starts its own agent process; the agent logs every request it
 * receives, so the harness checks there what the suite sent (the
 * session/cancel of an interrupt). The agent's
 * process is ended by stop(), so nothing can reach a stopped session
 * (no afterStop).
 *
 * The asking scenario is the flavor's own: an ACP permission request for
 * `acp`, xAI's structured question (`_x.ai/ask_user_question`) for `grok`.
 */

interface Flavor {
  readonly driver: string;
  readonly create: () => ProviderDriver;
  /** A script step that asks, saving the agent's answer as `a`. */
  readonly ask: Record<string, unknown>;
  /** The answer the agent receives for the suite's response. */
  readonly answered: string;
}

const PERMISSION: Flavor = {
  driver: "acp",
  create: () => createAcpDriver(),
  ask: { permission: { toolCall: { toolCallId: "call-1", title: "rm -rf build", kind: "execute", rawInput: { command: "rm -rf build" } } }, as: "a" },
  answered: '{"outcome":"selected","optionId":"allow"}',
};

const GROK_QUESTION: Flavor = {
  driver: "grok",
  create: () => createGrokDriver(),
  ask: { ext: { method: "_x.ai/ask_user_question", params: { questions: [{ question: "Proceed?", options: [{ label: "yes" }, { label: "no" }] }] } }, as: "a" },
  answered: '{"outcome":"accepted","answers":{"Proceed?":["yes"]}}',
};

function acpHarness(flavor: Flavor): DriverContractHarness {
  return {
    async open(recorder) {
      const agent = scriptedAgentSetup();
      const driver = flavor.create();
      const instance = agent.instance({ id: flavor.driver, driver: flavor.driver, caps: { http: true } });
      let session;
      try {
        session = await driver.openSession({
          instance,
          threadId: "thread:contract",
          providerSessionId: "provider-session:contract",
          cwd: agent.dir,
          runtimeMode: "approval-required",
          interactionMode: "default",
          model: null,
          mcp: { url: "http://127.0.0.1:1/mcp", token: "tok_contract_0123456789" },
          onEvent: recorder.onEvent,
        });
      } catch (error) {
        agent.close();
        throw error;
      }
      const methods = (): string[] => agent.requests().map((request) => request.method);
      const said = (runId: string, text: string) => recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === text, `the agent's "${text}"`);
      const open = session;
      return {
        session: open,
        capabilities: driver.capabilities(instance),
        startCompletingTurn: (runId) => open.startTurn({ runId, input: acpScript({ thought: "thinking" }, { chunk: `done ${runId}` }, { usage: { inputTokens: 12, outputTokens: 3 } }) }),
        startOpenTurn: (runId) => open.startTurn({ runId, input: acpScript({ chunk: "working" }, { waitForCancel: true }) }),
        // ACP has no steering: the suite expects `unsupported` (Loom steers by interrupt-and-restart instead).
        finishSteeredTurn: () => Promise.reject(new Error("acp does not steer")),
        afterInterrupt: async (runId) => {
          // The agent answers "cancelled" only once session/cancel reached it.
          await recorder.turnEnd(runId);
          if (!methods().includes("session/cancel")) throw new Error("session/cancel did not reach the agent");
        },
        startAskingTurn: (runId) => open.startTurn({ runId, input: acpScript(flavor.ask, { chunk: "answered {{a}}" }) }),
        afterAnswer: async (runId) => {
          await said(runId, `answered ${flavor.answered}`);
        },
        dispose: () => {
          agent.close();
          return Promise.resolve();
        },
      };
    },
  };
}

describeDriverContract("acp (scripted ACP agent process)", acpHarness(PERMISSION));
describeDriverContract("grok (scripted ACP agent process speaking xAI's extension)", acpHarness(GROK_QUESTION));
