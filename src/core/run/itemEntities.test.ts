import { describe, expect, it } from "vitest";
import type { ProviderItem } from "../../contracts/providerEvents.js";
import { derive, joinId } from "../ids.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, itemEvent, runCreated, testId } from "../testing/runFixtures.js";
import { type Scenario, given, testContext } from "../testing/scenario.js";

/**
 * message.updated and plan.updated (spec 004 Provider & Transcript Events):
 * the message or plan record committed beside its turn item's
 * turn-item.updated in the same decision, naming the item and holding no
 * body, so a client follows a message or a plan by its id.
 */

const A = "thread:a";
const R0 = "run:0";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: R0, messageId: "message:0" });
const history = [existing(thread), runCreated(running), itemEvent(aUserMessage(A, R0, 0, "turn-item:m0", "message:0", "start"))];

const itemIdOf = (nativeItemId: string) => derive.turnItemFromProviderItem({ driver: "scripted", providerTurnId: R0, nativeItemId });
const messageIdOf = (nativeItemId: string) => derive.messageFromProviderItem({ driver: "scripted", providerTurnId: R0, nativeItemId });
const completed = (nativeItemId: string, item: ProviderItem) => cmd("provider-runtime.item-completed", { threadId: A, runId: R0, driver: "scripted", nativeItemId, item });

/** The decision's event types in order, and its entity events' data. */
function committed(scenario: Scenario) {
  if (scenario.decision.kind !== "accepted") throw new Error(`rejected: ${scenario.decision.rejection.code}`);
  const { events } = scenario.decision;
  return { types: events.map((event) => event.type), entities: events.flatMap((event) => (event.type === "message.updated" || event.type === "plan.updated" ? [event] : [])) };
}

describe("message.updated", () => {
  it("follows a user message: its id, thread, run, item, role and length, right after its item, without the text", () => {
    const idle = [existing(thread)];
    const { types, entities } = committed(given(...idle).when(cmd("message.dispatch", { threadId: A, text: "hello there" })));
    expect(types).toEqual(["run.created", "turn-item.updated", "message.updated", "run.updated"]);
    expect(entities).toEqual([
      {
        type: "message.updated",
        streamId: A,
        data: {
          message: { messageId: testId("message", 2), threadId: A, runId: testId("run", 1), turnItemId: testId("turn-item", 3), role: "user", status: "completed", length: 11 },
        },
      },
    ]);
    expect(JSON.stringify(entities)).not.toContain("hello there");
  });

  it("follows an assistant message by its derived id as the provider reports it again, the same item, its new length", () => {
    const first = given(...history).when(completed("native-1", { kind: "assistant_message", text: "Hel" }));
    const again = given(...first.thenHistory()).when(completed("native-1", { kind: "assistant_message", text: "Hello, world" }), testContext("2026-03-01T12:05:00.000Z"));
    const record = { messageId: messageIdOf("native-1"), threadId: A, runId: R0, turnItemId: itemIdOf("native-1"), role: "assistant", status: "completed" };
    expect(committed(first).entities.map((event) => event.data)).toEqual([{ message: { ...record, length: 3 } }]);
    expect(committed(again).entities.map((event) => event.data)).toEqual([{ message: { ...record, length: 12 } }]);
    expect(committed(again).types).toEqual(["turn-item.updated", "message.updated"]);
  });
});

describe("plan.updated", () => {
  it("follows a proposed plan: its planId, item, title and each step's status, without the markdown or step texts", () => {
    const plan: ProviderItem = {
      kind: "proposed_plan",
      title: "Ship it",
      markdown: "# Ship it\n1. tests\n2. docs",
      steps: [
        { text: "tests", status: "completed" },
        { text: "docs", status: "in_progress" },
        { text: "release", status: "pending" },
      ],
    };
    const { types, entities } = committed(given(...history).when(completed("plan-1", plan)));
    expect(types).toEqual(["turn-item.updated", "plan.updated"]);
    const turnItemId = itemIdOf("plan-1");
    expect(entities).toEqual([
      {
        type: "plan.updated",
        streamId: A,
        data: { plan: { planId: joinId("plan", "turn-item", turnItemId), threadId: A, runId: R0, turnItemId, title: "Ship it", stepStatuses: ["completed", "in_progress", "pending"] } },
      },
    ]);
    expect(JSON.stringify(entities)).not.toMatch(/tests|docs|release/);
  });
});

describe("other items", () => {
  it("stand for no message or plan: a command execution commits its item alone", () => {
    const { types } = committed(
      given(...history).when(completed("cmd-1", { kind: "command_execution", command: "ls", cwd: "/work", exitCode: 0, outputPreview: "a\nb", outputTruncated: false, durationMs: 5 })),
    );
    expect(types).toEqual(["turn-item.updated"]);
  });
});
