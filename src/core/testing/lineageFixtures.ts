import type { Run } from "../../contracts/entities/runs.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { existing } from "./fixtures.js";
import { aRun, aUserMessage, anItem, itemEvent, runCreated } from "./runFixtures.js";

/** When fixture runs of lineage tests ended: before TEST_NOW. */
export const ENDED = "2026-03-01T11:30:00.000Z";

/**
 * A thread with `n` runs as history: run k (`<thread>:run:k`, ordinal k,
 * completed unless `fields` says otherwise) holds the user message
 * "question k" and the assistant reply "answer k", at positions 2k-2 and 2k-1.
 */
export function threadHistory(thread: AppThread, n: number, fields: (k: number) => Partial<Run> = () => ({})): DomainEvent[] {
  const events: DomainEvent[] = [existing(thread)];
  for (let k = 1; k <= n; k++) {
    const run = aRun(thread, { id: `${thread.id}:run:${k}`, ordinal: k, status: "completed", messageId: `${thread.id}:message:${k}`, endReason: "completed", endedAt: ENDED, ...fields(k) });
    events.push(
      runCreated(run),
      itemEvent(aUserMessage(thread.id, run.id, 2 * (k - 1), `${thread.id}:user:${k}`, `${thread.id}:message:${k}`, `question ${k}`)),
      itemEvent(
        anItem(thread.id, run.id, 2 * k - 1, `${thread.id}:reply:${k}`, {
          type: "assistant_message",
          messageId: `${thread.id}:reply:${k}`,
          text: `answer ${k}`,
          streaming: false,
          createdBy: "agent",
          creationSource: "provider",
        }),
      ),
    );
  }
  return events;
}
