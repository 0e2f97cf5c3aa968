import type { ClaimAnswer, DeliveryClaim, DeliveryRecord, WebhookDeliveryLedger } from "../../contracts/webhookDeliveries.js";

/** The accepted webhook deliveries of a process that keeps no state dir (the deterministic simulator); lost with it. */
export class MemoryWebhookDeliveries implements WebhookDeliveryLedger {
  /** Task id → delivery key → record, in claim order. */
  private readonly tasks = new Map<string, Map<string, DeliveryRecord>>();

  claim(claim: DeliveryClaim): ClaimAnswer {
    for (const records of this.tasks.values()) {
      for (const [key, record] of records) if (record.forgetAt !== null && record.forgetAt < claim.receivedAt) records.delete(key);
    }
    const records = this.tasks.get(claim.scheduledTaskId) ?? new Map<string, DeliveryRecord>();
    this.tasks.set(claim.scheduledTaskId, records);
    for (const key of claim.keys) {
      const earlier = records.get(key);
      if (earlier !== undefined) return { first: false, earlier };
    }
    for (const key of claim.keys) {
      records.set(key, { scheduledTaskId: claim.scheduledTaskId, key, receivedAt: claim.receivedAt, forgetAt: claim.forgetAt, fireCommandId: claim.fireCommandId, replays: 0, lastReplayAt: null });
    }
    return { first: true };
  }

  recordReplay(scheduledTaskId: string, key: string, at: number): DeliveryRecord | null {
    const records = this.tasks.get(scheduledTaskId);
    const record = records?.get(key);
    if (records === undefined || record === undefined) return null;
    const counted = { ...record, replays: record.replays + 1, lastReplayAt: at };
    records.set(key, counted);
    return counted;
  }

  list(scheduledTaskId: string): readonly DeliveryRecord[] {
    return [...(this.tasks.get(scheduledTaskId)?.values() ?? [])];
  }

  forgetTask(scheduledTaskId: string): void {
    this.tasks.delete(scheduledTaskId);
  }

  close(): void {
    this.tasks.clear();
  }
}
