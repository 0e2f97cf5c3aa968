import { describe, expect, it } from "vitest";
import type { TurnEndStatus } from "../contracts/providerEvents.js";
import { ROOT, ROOT_RUN, rootWithRun, turnEnds } from "../core/testing/delegationFixtures.js";
import { TEST_PROVIDERS } from "../core/testing/scenario.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import type { OutputEvent } from "./liveChannel.js";
import { Orchestrator } from "./orchestrator.js";

/**
 * A command's live output ends with its run: a turn that ends while a
 * command still streams (interrupted, failed, or completed without the
 * provider reporting the command finished) leaves no output stream open, so
 * no reader shows that command running after its turn is over. A stream
 * keeps the command line its provider told with the first chunk.
 */

async function running(): Promise<Orchestrator> {
  const store = new MemoryEventStore();
  const events = rootWithRun("plain").map((event) => ({ ...event }));
  await store.commit([{ receipt: { status: "accepted", commandId: "cmd:seed", commandType: "test.seed", acceptedAt: new Date(0).toISOString() }, events, outbox: [] }]);
  const orchestrator = await Orchestrator.open({ store, providers: (id) => TEST_PROVIDERS[id] ?? null });
  expect(orchestrator.state.runs.get(ROOT_RUN)?.status).toBe("running");
  return orchestrator;
}

describe("live command output at the end of its run", () => {
  for (const status of ["interrupted", "failed", "completed"] satisfies TurnEndStatus[]) {
    it(`ends when the turn ends ${status}; another run's stream stays open`, async () => {
      const orchestrator = await running();
      const channel = orchestrator.liveChannel;
      channel.appendOutput({ threadId: ROOT, runId: ROOT_RUN, itemId: "turn-item:cmd", outputStreamId: "output-stream:cmd", text: "line-1\n", command: "npm test" });
      channel.appendOutput({ threadId: ROOT, runId: "run:other", itemId: "turn-item:other", outputStreamId: "output-stream:other", text: "other\n" });
      const heard: OutputEvent[] = [];
      const followed = channel.followOutput("output-stream:cmd", 0, (event) => heard.push(event));
      expect(followed?.tail).toMatchObject({ text: "line-1\n", ended: false });
      expect(channel.runningOutputs(ROOT)).toEqual([
        { runId: ROOT_RUN, itemId: "turn-item:cmd", outputStreamId: "output-stream:cmd", command: "npm test" },
        { runId: "run:other", itemId: "turn-item:other", outputStreamId: "output-stream:other", command: null },
      ]);

      expect(await orchestrator.dispatch(turnEnds(ROOT, ROOT_RUN, status, status === "failed" ? "boom" : null))).toMatchObject({ status: "accepted" });

      expect(orchestrator.state.runs.get(ROOT_RUN)?.status).toBe(status);
      expect(heard).toEqual([{ kind: "end" }]);
      expect(channel.runningOutputs(ROOT).map((o) => o.outputStreamId)).toEqual(["output-stream:other"]);
      // A late subscriber reads the tail as ended, and more output of the ended run is dropped.
      channel.appendOutput({ threadId: ROOT, runId: ROOT_RUN, itemId: "turn-item:cmd", outputStreamId: "output-stream:cmd", text: "late\n" });
      expect(channel.followOutput("output-stream:cmd", 0, () => undefined)?.tail).toMatchObject({ text: "line-1\n", ended: true });
      await orchestrator.close();
    });
  }
});
