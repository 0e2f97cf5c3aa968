import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MessageRecord, PlanRecord } from "../contracts/entities/transcriptRecords.js";
import type { TurnItem } from "../contracts/turnItems.js";
import type { ThreadStreamUpdate } from "../contracts/wire/projections.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { RecordedStream, wsClient } from "../testkit/wireClients.js";

/**
 * message.updated and plan.updated over real WebSockets to the real server
 * (docs/wire.md, "Messages and plans"): a thread subscription receives each
 * right after the turn-item.updated of its item, a client follows a message
 * or a plan by its id and reads its body from the item the record names,
 * and a subscription with every compaction on expands to exactly what a
 * plain one receives.
 */

let h: LoomHarness;

beforeAll(async () => {
  h = await LoomHarness.start();
});

afterAll(async () => {
  await h.close();
});

type WireEventUpdate = Extract<ThreadStreamUpdate, { kind: "event" }>;

const eventsOf = (updates: readonly ThreadStreamUpdate[]) => updates.filter((update): update is WireEventUpdate => update.kind === "event").map((update) => update.event);

describe("message and plan records on a thread subscription", () => {
  it("follow the turn items they name, with no body, the same through compaction", async () => {
    const client = await wsClient(h);
    try {
      const { threadId } = await h.createThread({ title: "records", target: { providerInstanceId: "scripted" } });
      const plain = RecordedStream.open(client, "orchestration.subscribeThread", { threadId });
      const compacted = RecordedStream.open(client, "orchestration.subscribeThread", { threadId }, { compactIds: true, dedupeBodies: true });
      await Promise.all([plain, compacted].map((stream) => stream.next((update) => update.kind === "snapshot", "the snapshot")));

      const plan = { kind: "proposed_plan", title: "Two steps", markdown: "1. look\n2. answer", steps: [{ text: "look", status: "completed" }, { text: "answer", status: "in_progress" }] };
      const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message: script({ emit: plan }, { say: "the answer" }) });
      await h.waitForEnd(sent.runId);
      const ended = (update: ThreadStreamUpdate) => update.kind === "event" && update.event.type === "run.updated" && (update.event.data as { run: { status: string } }).run.status === "completed";
      await Promise.all([plain, compacted].map((stream) => stream.next(ended, "the run's end")));

      const events = eventsOf(plain.updates);
      const items = new Map<string, TurnItem>();
      for (const event of events) if (event.type === "turn-item.updated") items.set((event.data as { item: TurnItem }).item.id, (event.data as { item: TurnItem }).item);
      const records = events.filter((event) => event.type === "message.updated" || event.type === "plan.updated");
      expect(records.map((event) => event.type)).toEqual(["message.updated", "plan.updated", "message.updated"]);
      for (const record of records) {
        // Right after its item's event, in the same commit.
        const before = events[events.indexOf(record) - 1]!;
        expect(before).toMatchObject({ type: "turn-item.updated", sequence: record.sequence - 1 });
        expect(JSON.stringify(record.data)).not.toMatch(/the answer|look|answer\b/);
      }

      const [user, planned, assistant] = records.map((event) => event.data) as [{ message: MessageRecord }, { plan: PlanRecord }, { message: MessageRecord }];
      const userItem = items.get(user.message.turnItemId);
      expect(userItem).toMatchObject({ type: "user_message", messageId: user.message.messageId, runId: sent.runId });
      expect(user.message).toMatchObject({ threadId, runId: sent.runId, role: "user", status: "completed", length: userItem?.type === "user_message" ? userItem.text.length : -1 });
      expect(items.get(planned.plan.turnItemId)).toMatchObject({ type: "proposed_plan", planId: planned.plan.planId, markdown: plan.markdown });
      expect(planned.plan).toMatchObject({ threadId, runId: sent.runId, title: "Two steps", stepStatuses: ["completed", "in_progress"] });
      expect(items.get(assistant.message.turnItemId)).toMatchObject({ type: "assistant_message", messageId: assistant.message.messageId, text: "the answer" });
      expect(assistant.message).toMatchObject({ threadId, runId: sent.runId, role: "assistant", status: "completed", length: "the answer".length });

      // Interned ids and deduped bodies expand back exactly.
      expect(eventsOf(compacted.updates)).toEqual(events);
      plain.close();
      compacted.close();
    } finally {
      await client.close();
    }
  });
});
