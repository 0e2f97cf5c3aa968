import { type KnownDomainEvent, messageEvent, planEvent } from "../../contracts/events.js";
import type { TurnItem } from "../../contracts/turnItems.js";

/**
 * The message and plan entities a turn item stands for (spec 004
 * `message.updated`, `plan.updated`; docs/wire.md, "Messages and plans"):
 * the events committed beside the item's own `turn-item.updated`, so a client
 * follows a message or a plan by its id. They name the item instead of
 * repeating its body, which the item event of the same commit carries.
 */
export function itemEntityEvents(item: TurnItem): KnownDomainEvent[] {
  const { threadId, runId } = item;
  switch (item.type) {
    case "user_message":
      return [messageEvent({ messageId: item.messageId, threadId, runId, turnItemId: item.id, role: "user", status: "completed", length: item.text.length })];
    case "assistant_message":
      return [messageEvent({ messageId: item.messageId, threadId, runId, turnItemId: item.id, role: "assistant", status: item.streaming ? "streaming" : "completed", length: item.text.length })];
    case "proposed_plan":
      return [planEvent({ planId: item.planId, threadId, runId, turnItemId: item.id, title: item.title, stepStatuses: item.steps.map((step) => step.status) })];
    default:
      return [];
  }
}
