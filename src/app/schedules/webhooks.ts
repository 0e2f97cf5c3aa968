import { randomUUID } from "node:crypto";
import type { ScheduledTask, WebhookFilter } from "../../contracts/entities/scheduledTasks.js";
import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { fireCommandId, fireScheduledTask } from "./fire.js";
import { type VerifiedDelivery, WebhookRefusal, sameHex, verifySignedDelivery } from "./webhookSignatures.js";
import { tokenHash } from "./webhookKeys.js";

/** The most of a webhook body that reaches the prompt, in characters; the rest is cut with a note. */
export const WEBHOOK_CONTEXT_CHARS = 16_000;

export interface WebhookDelivery {
  readonly scheduledTaskId: string;
  readonly token: string;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/**
 * What a delivery came to. `not_found` covers an unknown task and a wrong
 * token alike, so the URL's existence does not leak. `refused` is a
 * signed task's delivery that is not fresh and genuine: a missing or wrong
 * signature and a stale timestamp record nothing; a replayed delivery is
 * counted on the earlier delivery's record. `skipped` (paused, a filter, a
 * repeated dedupe value) fires nothing; `fired` is a fire, whose outcome
 * may itself be skipped by the overlap policy.
 */
export type WebhookOutcome =
  | { readonly kind: "not_found" }
  | { readonly kind: "refused"; readonly refusal: WebhookRefusal; readonly reason: string }
  | { readonly kind: "skipped"; readonly reason: string }
  | { readonly kind: "fired"; readonly outcome: string; readonly runId: string | null; readonly threadId: string | null; readonly reason: string | null };

/** The value at a dot-separated path of a parsed JSON body, or undefined. */
export function valueAt(body: unknown, path: string): unknown {
  let at: unknown = body;
  for (const key of path.split(".")) {
    if (typeof at !== "object" || at === null || !Object.prototype.hasOwnProperty.call(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function failedFilter(filters: readonly WebhookFilter[], json: unknown): WebhookFilter | null {
  return filters.find((filter) => valueAt(json, filter.path) !== filter.equals) ?? null;
}

function dedupeValue(task: ScheduledTask, delivery: WebhookDelivery, json: unknown): string | null {
  if (task.trigger.type !== "webhook" || task.trigger.dedupeKey === null) return null;
  const key = task.trigger.dedupeKey;
  if (key.startsWith("header:")) return delivery.headers[key.slice("header:".length).toLowerCase()] ?? null;
  const value = valueAt(json, key.slice("body:".length));
  return value === undefined || value === null ? null : typeof value === "string" ? value : JSON.stringify(value);
}

function bounded(text: string): string {
  return text.length <= WEBHOOK_CONTEXT_CHARS ? text : `${text.slice(0, WEBHOOK_CONTEXT_CHARS)}\n[... ${text.length - WEBHOOK_CONTEXT_CHARS} more characters cut]`;
}

/** Why a delivery fires nothing before the fire is tried (paused, a filter), or null. */
function skipReason(task: ScheduledTask, json: unknown): string | null {
  if (!task.enabled) return "the task is paused";
  if (task.trigger.type !== "webhook" || task.trigger.filters.length === 0) return null;
  if (json === undefined) return "the body is not JSON, so the filters cannot match";
  const failed = failedFilter(task.trigger.filters, json);
  return failed === null ? null : `filter ${failed.path} = ${JSON.stringify(failed.equals)} did not match`;
}

function parsedJson(text: string): unknown {
  try {
    return text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Take a verified delivery, or say it is a replay. The record is written
 * before the fire, so two copies arriving together cannot both fire; an
 * earlier copy whose fire never committed (the server stopped between the
 * two) is not a replay, and this copy fires in its place.
 */
async function takeDelivery(ctx: AppContext, task: ScheduledTask, verified: VerifiedDelivery, fireCommand: string | null): Promise<"first" | "retry" | WebhookOutcome> {
  const now = ctx.clock();
  const claim = ctx.schedules.deliveries.claim({ scheduledTaskId: task.id, keys: verified.keys, receivedAt: now, forgetAt: verified.forgetAt, fireCommandId: fireCommand });
  if (claim.first) return "first";
  const earlier = claim.earlier;
  if (earlier.fireCommandId !== null && (await ctx.orchestrator.receiptOf(earlier.fireCommandId)) === null) return "retry";
  return replayed(ctx, task, verified, earlier.key);
}

/** Count the refused copy on the earlier delivery's record (under `key`) and say so. */
function replayed(ctx: AppContext, task: ScheduledTask, verified: VerifiedDelivery, key: string): WebhookOutcome {
  const now = ctx.clock();
  const record = ctx.schedules.deliveries.recordReplay(task.id, key, now);
  const times = record?.replays ?? 1;
  return {
    kind: "refused",
    refusal: WebhookRefusal.replayedDelivery,
    reason: `${verified.label} was already received at ${new Date(record?.receivedAt ?? now).toISOString()}; a replay fires nothing (${times} replay${times === 1 ? "" : "s"} refused)`,
  };
}

/**
 * POST /hooks/:task/:token. Checks, in order: the task and token; for a
 * signed task the signature, the timestamp's window and that the delivery
 * was not taken before (docs/schedules.md, "Signed deliveries"); paused,
 * filters, dedupe; then one fire through the shared path. The fire's
 * command id comes from the dedupe value, else from the signed delivery's
 * key, so a repeated delivery (or a sender's retry) makes no second run.
 */
export async function receiveWebhook(ctx: AppContext, delivery: WebhookDelivery): Promise<WebhookOutcome> {
  const task = ctx.orchestrator.state.scheduledTasks.get(delivery.scheduledTaskId);
  if (task === undefined || task.trigger.type !== "webhook" || !sameHex(task.trigger.tokenHash, tokenHash(delivery.token))) return { kind: "not_found" };
  let verified: VerifiedDelivery | null = null;
  if (task.trigger.signed) {
    const secret = ctx.schedules.keys.get(task.id)?.secret ?? null;
    if (secret === null) return { kind: "refused", refusal: WebhookRefusal.invalidSignature, reason: "the task's signing secret is missing from this server's webhook key file" };
    const verification = verifySignedDelivery(secret, delivery.headers, delivery.body, ctx.clock(), ctx.schedules.webhookToleranceMs);
    if (!verification.ok) return { kind: "refused", refusal: verification.refusal, reason: verification.reason };
    verified = verification.delivery;
  }
  const text = delivery.body.toString("utf8");
  const json = parsedJson(text);
  const skip = skipReason(task, json);
  const dedupe = skip === null ? dedupeValue(task, delivery, json) : null;
  const fireKey = dedupe !== null ? joinId("hook", "dedupe", dedupe) : verified !== null ? joinId("hook", "delivery", verified.keys[0]!) : joinId("hook", randomUUID());
  const taken = verified === null ? "first" : await takeDelivery(ctx, task, verified, skip === null ? fireCommandId(task.id, fireKey) : null);
  if (typeof taken !== "string") return taken;
  if (skip !== null) return { kind: "skipped", reason: skip };
  const { fire, duplicate } = await fireScheduledTask(ctx, {
    scheduledTaskId: task.id,
    cause: "webhook",
    dueAt: new Date(ctx.clock()).toISOString(),
    instants: 1,
    nextFireAt: null,
    fireKey,
    context: text.length === 0 ? null : bounded(text),
  });
  if (duplicate) {
    // A copy of a delivery that another copy fired while this one was checked.
    if (verified !== null && (taken === "retry" || dedupe === null)) return replayed(ctx, task, verified, verified.keys[0]!);
    return { kind: "skipped", reason: `duplicate delivery (${task.trigger.dedupeKey ?? "dedupe"} = ${dedupe ?? "?"})` };
  }
  if (fire === null) return { kind: "skipped", reason: "the fire was not recorded" };
  return { kind: "fired", outcome: fire.outcome, runId: fire.runId, threadId: fire.threadId, reason: fire.reason };
}
