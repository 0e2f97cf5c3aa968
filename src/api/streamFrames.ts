import { wireEventJson } from "../app/orchestration/wireEvents.js";
import type { WireEvent } from "../contracts/wire/projections.js";

/**
 * The JSON of a `stream` frame carrying a committed event, serialized once per
 * event however many subscriptions send it: a commit fans out to every
 * subscriber of its thread, and each frame differs only in its subscription
 * id. The text is exactly `JSON.stringify({ type: "stream", id, update })`.
 * The event's JSON comes from `wireEventJson`, which reuses the text the
 * store wrote for the event's data. Frames with id interning or body dedupe
 * are per connection and are not built here.
 */

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
  return `{"type":"stream","id":${JSON.stringify(id)},"update":{"kind":"event","event":${wireEventJson(update.event)}}}`;
}
