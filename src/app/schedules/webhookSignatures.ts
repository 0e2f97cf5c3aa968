import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * How a signed webhook delivery proves it is fresh (docs/schedules.md,
 * "Signed deliveries"). Two sender styles, told apart by their headers:
 *
 * - plain: `X-Loom-Timestamp: <unix seconds>` and `X-Loom-Signature:
 *   sha256=<hex HMAC-SHA256 of "<timestamp>." followed by the raw body>`.
 *   The timestamp must be within the tolerance of the server's clock, so a
 *   captured request stops working when it leaves the window; inside it the
 *   delivery is known by its timestamp and body.
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
 *   and `X-GitHub-Delivery: <id>`. GitHub signs no timestamp, so nothing
 *   ages such a delivery out: it is known by its delivery id and by its
 *   body's digest (the id is not signed, so a copy with a new id is still
 *   the same signed body) for as long as the task exists.
 */
export const SignatureHeader = {
  loomTimestamp: "x-loom-timestamp",
  loomSignature: "x-loom-signature",
  github: "x-hub-signature-256",
  githubDelivery: "x-github-delivery",
} as const;

/** Why a signed delivery is refused before anything else is looked at. */
export const WebhookRefusal = {
  /** The signature (or a header it needs) is missing, malformed or wrong. */
  invalidSignature: "invalid_signature",
  /** A valid signature over a timestamp outside the tolerance window. */
  staleTimestamp: "stale_timestamp",
  /** The delivery was taken before (any of its keys). */
  replayedDelivery: "replayed_delivery",
} as const;
export type WebhookRefusal = (typeof WebhookRefusal)[keyof typeof WebhookRefusal];

/** A verified delivery: the keys it is known by and when the record of it may be forgotten. */
export interface VerifiedDelivery {
  readonly keys: readonly string[];
  /** Null: kept while the task exists (GitHub deliveries carry no signed time). */
  readonly forgetAt: number | null;
  /** How the sender named it, for answers and logs. */
  readonly label: string;
}

export type Verification = { readonly ok: true; readonly delivery: VerifiedDelivery } | { readonly ok: false; readonly refusal: WebhookRefusal; readonly reason: string };

/** Longest X-GitHub-Delivery value taken (GitHub's are 36-character GUIDs). */
const MAX_DELIVERY_ID = 200;
const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;
const UNIX_SECONDS = /^\d{1,12}$/;

/** Two hex digests are equal, compared in constant time (false for empty or malformed ones). */
export function sameHex(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

function hmac(secret: string, ...parts: readonly Buffer[]): string {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(part);
  return mac.digest("hex");
}

function bodyDigest(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

function refused(refusal: WebhookRefusal, reason: string): Verification {
  return { ok: false, refusal, reason };
}

/** Check `header` is `sha256=<hex>` and matches `expected`; the problem, or null. */
function signatureProblem(name: string, header: string, expected: string): string | null {
  const match = SIGNATURE.exec(header.trim());
  if (match === null) return `${name} must be sha256=<64 hex digits>`;
  return sameHex(expected, match[1]!.toLowerCase()) ? null : "signature does not match the body";
}

/**
 * Verify a delivery to a task that requires a signature. Headers are
 * lower-cased; `now` and `toleranceMs` in milliseconds. The signature is
 * checked before the timestamp, so only the secret's holder learns that a
 * timestamp was too old.
 */
export function verifySignedDelivery(secret: string, headers: Readonly<Record<string, string | undefined>>, body: Buffer, now: number, toleranceMs: number): Verification {
  const loom = headers[SignatureHeader.loomSignature];
  if (loom !== undefined) {
    const timestamp = headers[SignatureHeader.loomTimestamp]?.trim();
    if (timestamp === undefined) return refused(WebhookRefusal.invalidSignature, `missing ${SignatureHeader.loomTimestamp} header (unix seconds, signed with the body)`);
    if (!UNIX_SECONDS.test(timestamp)) return refused(WebhookRefusal.invalidSignature, `${SignatureHeader.loomTimestamp} must be unix seconds, got ${JSON.stringify(timestamp.slice(0, 40))}`);
    const problem = signatureProblem(SignatureHeader.loomSignature, loom, hmac(secret, Buffer.from(`${timestamp}.`, "utf8"), body));
    if (problem !== null) return refused(WebhookRefusal.invalidSignature, problem);
    const at = Number(timestamp) * 1000;
    if (Math.abs(now - at) > toleranceMs) {
      return refused(WebhookRefusal.staleTimestamp, `${SignatureHeader.loomTimestamp} ${timestamp} is ${Math.round((now - at) / 1000)} s from the server's clock; at most ${Math.round(toleranceMs / 1000)} s is accepted`);
    }
    return { ok: true, delivery: { keys: [`ts:${timestamp}:${bodyDigest(body)}`], forgetAt: at + toleranceMs, label: `timestamp ${timestamp}` } };
  }
  const github = headers[SignatureHeader.github];
  if (github === undefined) return refused(WebhookRefusal.invalidSignature, `missing ${SignatureHeader.loomSignature} (with ${SignatureHeader.loomTimestamp}) or ${SignatureHeader.github} (with ${SignatureHeader.githubDelivery}) header`);
  const problem = signatureProblem(SignatureHeader.github, github, hmac(secret, body));
  if (problem !== null) return refused(WebhookRefusal.invalidSignature, problem);
  const deliveryId = headers[SignatureHeader.githubDelivery]?.trim() ?? "";
  if (deliveryId === "" || deliveryId.length > MAX_DELIVERY_ID) {
    return refused(WebhookRefusal.invalidSignature, `a ${SignatureHeader.github} delivery needs its ${SignatureHeader.githubDelivery} header (1 to ${MAX_DELIVERY_ID} characters)`);
  }
  return { ok: true, delivery: { keys: [`github:${deliveryId}`, `body:${bodyDigest(body)}`], forgetAt: null, label: `delivery ${deliveryId}` } };
}
