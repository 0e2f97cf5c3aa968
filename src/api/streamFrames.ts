import type { WireEvent } from "../contracts/wire/projections.js";

/**
 * The JSON of a `stream` frame carrying a committed event, serialized once per
 * event however many subscriptions send it: a commit fans out to every
 * subscriber of its thread, and each frame differs only in its subscription
 * id. The text is exactly `JSON.stringify({ type: "stream", id, update })`.
 * Frames with id interning or body dedupe are per connection and are not
 * built here.
 */

const eventJson = new WeakMap<WireEvent, string>();

export interface EventUpdate {
  readonly kind: "event";
  readonly event: WireEvent;
}

/** An update that is exactly `{ kind: "event", event }` (key order included), so its frame can be spliced. */
export function isEventUpdate(update: unknown): update is EventUpdate {
  if (typeof update !== "object" || update === null) return false;
  const keys = Object.keys(update);
  return keys.length === 2 && keys[0] === "kind" && keys[1] === "event" && (update as { kind: unknown }).kind === "event";
}

export function eventStreamFrame(id: string, update: EventUpdate): string {
  let json = eventJson.get(update.event);
  if (json === undefined) {
    json = JSON.stringify(update.event);
    eventJson.set(update.event, json);
  }
  return `{"type":"stream","id":${JSON.stringify(id)},"update":{"kind":"event","event":${json}}}`;
}
