import type { StoredEvent } from "../../contracts/envelopes.js";

/** An events row in array mode. */
export type EventTuple = [sequence: number, eventId: string, commandId: string, streamId: string, type: string, data: unknown, occurredAt: string];

export const EVENT_COLUMNS = "sequence, event_id, command_id, stream_id, type, data, occurred_at";

export function toStoredEvent(row: EventTuple): StoredEvent {
  return { sequence: row[0], eventId: row[1], commandId: row[2], streamId: row[3], type: row[4], data: row[5], occurredAt: row[6] };
}
