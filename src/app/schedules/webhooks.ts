import { createHmac, timingSafeEqual } from "node:crypto";
import { randomUUID } from "node:crypto";
import type { ScheduledTask, WebhookFilter } from "../../contracts/entities/scheduledTasks.js";
import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { fireScheduledTask } from "./fire.js";
import { tokenHash } from "./webhookKeys.js";

/** The most of a webhook body that reaches the prompt, in characters; the rest is cut with a note. */
export const WEBHOOK_CONTEXT_CHARS = 16_000;
/** The signature header (GitHub's): `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const SIGNATURE_HEADER = "x-hub-signature-256";

export interface WebhookDelivery {
  readonly scheduledTaskId: string;
  readonly token: string;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

/**
 * What a delivery came to. `not_found` covers an unknown task and a wrong
 * token alike, so the URL's existence does not leak; `unauthorized` is a
 * missing or wrong signature. Neither records anything. `skipped` (paused,
 * a filter, a repeated dedupe value) records nothing either; `fired` is a
 * fire, whose outcome may itself be skipped by the overlap policy.
 */
export type WebhookOutcome =
  | { readonly kind: "not_found" }
  | { readonly kind: "unauthorized"; readonly reason: string }
  | { readonly kind: "skipped"; readonly reason: string }
  | { readonly kind: "fired"; readonly outcome: string; readonly runId: string | null; readonly threadId: string | null; readonly reason: string | null };

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

function signatureProblem(secret: string, header: string | undefined, body: Buffer): string | null {
  if (header === undefined) return `missing ${SIGNATURE_HEADER} header`;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (match === null) return `${SIGNATURE_HEADER} must be sha256=<64 hex digits>`;
  const expected = createHmac("sha256", secret).update(body).digest("hex");
  return sameHash(expected, match[1]!.toLowerCase()) ? null : "signature does not match the body";
}

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

/**
 * POST /hooks/:task/:token. Checks, in order: the task and token, the
 * signature (when the task requires one), paused, filters, dedupe; then one
 * fire through the shared path. The fire's command id comes from the dedupe
 * value, so a repeated delivery (or a provider's retry) is answered with the
 * first fire and makes no second run.
 */
export async function receiveWebhook(ctx: AppContext, delivery: WebhookDelivery): Promise<WebhookOutcome> {
  const task = ctx.orchestrator.state.scheduledTasks.get(delivery.scheduledTaskId);
  if (task === undefined || task.trigger.type !== "webhook" || !sameHash(task.trigger.tokenHash, tokenHash(delivery.token))) return { kind: "not_found" };
  if (task.trigger.signed) {
    const secret = ctx.schedules.keys.get(task.id)?.secret ?? null;
    if (secret === null) return { kind: "unauthorized", reason: "the task's signing secret is missing from this server's webhook key file" };
    const problem = signatureProblem(secret, delivery.headers[SIGNATURE_HEADER], delivery.body);
    if (problem !== null) return { kind: "unauthorized", reason: problem };
  }
  if (!task.enabled) return { kind: "skipped", reason: "the task is paused" };
  const text = delivery.body.toString("utf8");
  let json: unknown = undefined;
  try {
    json = text.length === 0 ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (task.trigger.filters.length > 0) {
    if (json === undefined) return { kind: "skipped", reason: "the body is not JSON, so the filters cannot match" };
    const failed = failedFilter(task.trigger.filters, json);
    if (failed !== null) return { kind: "skipped", reason: `filter ${failed.path} = ${JSON.stringify(failed.equals)} did not match` };
  }
  const dedupe = dedupeValue(task, delivery, json);
  const { fire, duplicate } = await fireScheduledTask(ctx, {
    scheduledTaskId: task.id,
    cause: "webhook",
    dueAt: new Date(ctx.clock()).toISOString(),
    instants: 1,
    nextFireAt: null,
    fireKey: dedupe === null ? joinId("hook", randomUUID()) : joinId("hook", "dedupe", dedupe),
    context: text.length === 0 ? null : bounded(text),
  });
  if (duplicate) return { kind: "skipped", reason: `duplicate delivery (${task.trigger.dedupeKey ?? "dedupe"} = ${dedupe ?? "?"})` };
  if (fire === null) return { kind: "skipped", reason: "the fire was not recorded" };
  return { kind: "fired", outcome: fire.outcome, runId: fire.runId, threadId: fire.threadId, reason: fire.reason };
}
