import * as crypto from "node:crypto";

/**
 * Deterministic trace and span ids (docs/telemetry.md, "Ids"): a hash of the
 * Loom id they stand for, so a span exported live, after a restart or by
 * `loom trace --otlp` later has the same id every time, and an agent CLI
 * given a run's traceparent nests its spans under that run.
 */

/** Ids computed lately, by the Loom id they stand for, one table per kind: a tree's spans name the same trace, parents and links again and again. Forgotten in one go past this many. */
const REMEMBERED_IDS = 8_192;
const rememberedTraces = new Map<string, string>();
const rememberedSpans = new Map<string, string>();

/** sha256 in hex: the one-shot `crypto.hash` where Node has it (20.12 and later), about a third of a Hash object's cost for an id this short. */
const sha256Hex: (input: string) => string =
  typeof crypto.hash === "function" ? (input) => crypto.hash("sha256", input, "hex") : (input) => crypto.createHash("sha256").update(input).digest("hex");

function hex(remembered: Map<string, string>, label: string, id: string, digits: number): string {
  // Looked up by the id itself: an id from the state is the same string each time, so the lookup hashes nothing new.
  const known = remembered.get(id);
  if (known !== undefined) return known;
  const value = sha256Hex(`loom:${label}:${id}`).slice(0, digits);
  // An all-zero id is invalid in W3C trace context; a sha256 prefix of zeros is astronomically rare.
  const valid = /^0+$/.test(value) ? `${value.slice(0, -1)}1` : value;
  if (remembered.size >= REMEMBERED_IDS) remembered.clear();
  remembered.set(id, valid);
  return valid;
}

/** The trace of a root thread's tree when no caller's trace context was recorded with it. */
export function traceIdOfRoot(rootThreadId: string): string {
  return hex(rememberedTraces, "trace", rootThreadId, 32);
}

/** The span of one Loom entity (a run, an attempt, a turn item, a task, a workflow, a request, a wait). */
export function spanIdOf(entityId: string): string {
  return hex(rememberedSpans, "span", entityId, 16);
}

/** The span of a workflow's agent() step: step ids are unique within their workflow only. */
export function stepSpanId(workflowId: string, stepId: string): string {
  return spanIdOf(`${workflowId}/${stepId}`);
}
