import type { StoredEvent } from "../contracts/envelopes.js";

/**
 * The JSON text a store wrote for an event's data, kept beside the event it
 * hands to live subscribers, so the wire need not serialize the data again.
 * Only a store whose `data` is `JSON.parse` of exactly this text records it:
 * then `JSON.stringify(event.data)` is this text byte for byte (parsing and
 * serializing JSON.stringify's own output changes nothing). Weakly held: the
 * text goes when the event does.
 */
const dataJson = new WeakMap<StoredEvent, string>();

/** Record that `event.data` is `JSON.parse(json)`. */
export function rememberDataJson(event: StoredEvent, json: string): void {
  dataJson.set(event, json);
}

/** The text `event.data` was parsed from, when its store recorded it. */
export function storedDataJson(event: StoredEvent): string | undefined {
  return dataJson.get(event);
}
