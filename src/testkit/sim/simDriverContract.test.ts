import type { DriverContractHarness } from "../../providers/kit/testSuite.js";
import { describeDriverContract } from "../../providers/kit/testSuite.js";
import { SimRandom } from "./random.js";
import { SimScheduler, WORLD } from "./scheduler.js";
import { SIM_INSTANCES } from "./node.js";
import { SimDriver, type SimProviderHost, SimProviderLedger, type TurnStep } from "./simDriver.js";

/**
 * The simulated driver is held to the same contract as the real ones
 * (src/providers/kit/testSuite.ts), so what the simulator exercises is the
 * session manager's real counterpart. Its virtual clock runs free here: a
 * pump fires the next timer on every turn of the event loop. A turn's plan
 * comes from its input: `complete`, `open` (a question that waits), `asking`
 * (an approval that waits).
 */
const PLANS: Readonly<Record<string, readonly TurnStep[]>> = {
  complete: [{ kind: "say", delayMs: 5 }, { kind: "end", delayMs: 5, how: "completed" }],
  open: [{ kind: "ask", delayMs: 5 }, { kind: "end", delayMs: 5, how: "completed" }],
  asking: [{ kind: "approve", delayMs: 5 }, { kind: "end", delayMs: 5, how: "completed" }],
};

function simHarness(instanceId: string): DriverContractHarness {
  return {
    open(recorder) {
      const scheduler = new SimScheduler();
      const received: string[] = [];
      const host: SimProviderHost = {
        rng: new SimRandom(1),
        scheduler,
        activity: () => undefined,
        latency: () => 3,
        callFault: () => null,
        callDelay: () => 0,
        reorderChance: () => 0,
        planTurn: (_agent, input) => PLANS[input] ?? PLANS.complete!,
        runAgentOp: () => Promise.reject(new Error("no agent operations in the contract suite")),
        received: (input) => void received.push(input.text),
        violation: (invariant, message) => {
          throw new Error(`${invariant}: ${message}`);
        },
        note: () => undefined,
      };
      let pumping = true;
      const pump = (): void => {
        if (!pumping) return;
        scheduler.runNext();
        setImmediate(pump);
      };
      pump();
      const driver = new SimDriver(host, new SimProviderLedger(host), WORLD, "env:contract");
      const instance = SIM_INSTANCES.find((candidate) => candidate.id === instanceId)!;
      return driver
        .openSession({
          instance,
          threadId: "thread:contract",
          providerSessionId: "provider-session:contract",
          cwd: "/sim",
          runtimeMode: "approval-required",
          interactionMode: "default",
          model: null,
          mcp: null,
          onEvent: recorder.onEvent,
        })
        .then((session) => ({
          session,
          capabilities: driver.capabilities(instance),
          startCompletingTurn: (runId: string) => session.startTurn({ runId, input: "complete" }),
          startOpenTurn: (runId: string) => session.startTurn({ runId, input: "open" }),
          finishSteeredTurn: async (runId: string, text: string) => {
            if (!received.includes(text)) throw new Error(`the steer "${text}" never reached the simulated provider`);
            const question = await recorder.item(runId, (item) => item.kind === "user_input_request");
            if (question.item.kind !== "user_input_request") throw new Error("no question");
            await session.respondToRequest({ requestId: question.item.requestId, response: { answers: { q1: ["yes"] } } });
          },
          afterInterrupt: () => Promise.resolve(),
          startAskingTurn: (runId: string) => session.startTurn({ runId, input: "asking" }),
          afterAnswer: async (runId: string) => {
            await recorder.item(runId, (item) => item.kind === "assistant_message" && item.text.startsWith("sim got an answer"), "the answered step's message");
          },
          dispose: () => {
            pumping = false;
            return Promise.resolve();
          },
        }));
    },
  };
}

describeDriverContract("sim (steers and interrupts)", simHarness("sim-a"));
describeDriverContract("sim (neither steers nor interrupts)", simHarness("sim-c"));
