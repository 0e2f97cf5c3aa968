import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DriverContractHarness } from "../kit/testSuite.js";
import { describeDriverContract } from "../kit/testSuite.js";
import { scriptedDriver } from "./driver.js";
import { scriptedInstance } from "./sessionHarness.js";

/**
 * The scripted driver is its own provider: no fake, the real driver runs the
 * scripts below. An open turn waits on an `ask` step (answering it after a
 * steer ends the turn), an asking turn on an `approve` step. A second
 * instance with steering and interrupt switched off covers the `unsupported`
 * side of the contract.
 */

const script = (steps: unknown[]): string => JSON.stringify({ script: steps });

function scriptedHarness(options: Record<string, unknown>): DriverContractHarness {
  return {
    async open(recorder) {
      const cwd = await mkdtemp(join(tmpdir(), "loom-scripted-contract-"));
      const instance = scriptedInstance(options);
      const session = await scriptedDriver.openSession({
        instance,
        threadId: "thread:contract",
        providerSessionId: "provider-session:contract",
        cwd,
        runtimeMode: "approval-required",
        interactionMode: "default",
        model: null,
        mcp: null,
        onEvent: recorder.onEvent,
      });
      return {
        session,
        capabilities: scriptedDriver.capabilities(instance),
        startCompletingTurn: (runId) => session.startTurn({ runId, input: "hello" }),
        startOpenTurn: (runId) => session.startTurn({ runId, input: script([{ ask: "go on?" }, { say: "went on" }]) }),
        finishSteeredTurn: async (runId, text) => {
          // The steer was acknowledged at once; the turn still waits on its question.
          await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === `Steered: ${text}`, "the steer's acknowledgement");
          const question = await recorder.item(runId, (item) => item.kind === "user_input_request");
          if (question.item.kind !== "user_input_request") throw new Error("no question");
          await session.respondToRequest({ requestId: question.item.requestId, response: { answer: "yes" } });
        },
        afterInterrupt: () => Promise.resolve(),
        startAskingTurn: (runId) => session.startTurn({ runId, input: script([{ approve: { kind: "command", detail: "rm -rf build" } }, { say: "approved: {{approval.decision}}" }]) }),
        afterAnswer: async (runId) => {
          await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text === "approved: accept", "the approved step's message");
        },
        dispose: () => rm(cwd, { recursive: true, force: true }),
      };
    },
  };
}

describeDriverContract("scripted", scriptedHarness({}));
describeDriverContract("scripted without steering or interrupt", scriptedHarness({ capabilities: { steering: false, interrupt: false } }));
