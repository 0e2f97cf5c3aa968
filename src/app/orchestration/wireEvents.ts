import type { StoredEvent } from "../../contracts/envelopes.js";
import type { WireEvent } from "../../contracts/wire/projections.js";
import { storedDataJson } from "../../store/storedJson.js";

/**
 * One wire shape per stored event, shared by every subscription it fans out
 * to, and its JSON built once (api/streamFrames.ts splices it into each
 * subscription's frame).
 */
const wireEvents = new WeakMap<StoredEvent, WireEvent>();
/** The data's JSON of wire events whose store kept it (store/storedJson.ts). */
const dataJsonOf = new WeakMap<WireEvent, string>();
const eventJson = new WeakMap<WireEvent, string>();

export function wireEvent(event: StoredEvent): WireEvent {
  let shaped = wireEvents.get(event);
  if (shaped === undefined) {
    shaped = { sequence: event.sequence, type: event.type, data: event.data, occurredAt: event.occurredAt };
    wireEvents.set(event, shaped);
    const json = storedDataJson(event);
    if (json !== undefined) dataJsonOf.set(shaped, json);
  }
  return shaped;
}

/**
 * Exactly `JSON.stringify(event)`. For a shape made by `wireEvent` from an
 * event whose store kept its data's JSON, that text is spliced in instead of
 * serializing the data a second time (the commit serialized it once).
 */
export function wireEventJson(event: WireEvent): string {
  let json = eventJson.get(event);
  if (json === undefined) {
    const data = dataJsonOf.get(event);
    json =
      data === undefined
        ? JSON.stringify(event)
        : `{"sequence":${JSON.stringify(event.sequence)},"type":${JSON.stringify(event.type)},"data":${data},"occurredAt":${JSON.stringify(event.occurredAt)}}`;
    eventJson.set(event, json);
  }
  return json;
}
