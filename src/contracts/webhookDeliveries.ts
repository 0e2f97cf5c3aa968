/**
 * The webhook deliveries a server has accepted, so the same delivery is
 * never taken twice (docs/schedules.md, "Replays"). One record per
 * (scheduled task, delivery key); a delivery may have several keys (a
 * GitHub delivery: its id and its body's digest) and is a replay when any
 * of them was seen. A record whose `forgetAt` has passed may be dropped:
 * by then the delivery's signed timestamp is refused anyway.
 */
export interface DeliveryClaim {
  readonly scheduledTaskId: string;
  /** The delivery's keys: `ts:<unix seconds>:<body sha256>`, or `github:<delivery id>` and `body:<sha256>`. */
  readonly keys: readonly string[];
  /** Epoch milliseconds. */
  readonly receivedAt: number;
  /** Epoch milliseconds after which the record may be forgotten; null: kept while the task exists. */
  readonly forgetAt: number | null;
  /** The fire command this delivery leads to; null when it fires nothing (paused, filtered out). */
  readonly fireCommandId: string | null;
}

export interface DeliveryRecord {
  readonly scheduledTaskId: string;
  readonly key: string;
  readonly receivedAt: number;
  readonly forgetAt: number | null;
  readonly fireCommandId: string | null;
  /** Replays refused so far, and when the last one came. */
  readonly replays: number;
  readonly lastReplayAt: number | null;
}

/** A claim's answer: the first time any of its keys is seen, or the earlier delivery's record. */
export type ClaimAnswer = { readonly first: true } | { readonly first: false; readonly earlier: DeliveryRecord };

/**
 * Synchronous, so a check and its claim are one step: two copies of one
 * delivery arriving together get one `first`.
 */
export interface WebhookDeliveryLedger {
  /** Record the delivery unless one of its keys is known (records whose forgetAt is before `receivedAt` are dropped first). */
  claim(claim: DeliveryClaim): ClaimAnswer;
  /** Count a refused replay on the earlier delivery's record; answers the record as it is now. */
  recordReplay(scheduledTaskId: string, key: string, at: number): DeliveryRecord | null;
  /** The records of a task, oldest first. */
  list(scheduledTaskId: string): readonly DeliveryRecord[];
  /** Forget a deleted task's deliveries. */
  forgetTask(scheduledTaskId: string): void;
  close(): void;
}
