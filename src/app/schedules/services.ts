import type { WebhookDeliveryLedger } from "../../contracts/webhookDeliveries.js";
import type { WebhookKeyStore } from "./webhookKeys.js";

/** What the scheduled-task functions need from the server besides the engine. */
export interface ScheduleServices {
  readonly keys: WebhookKeyStore;
  /** The server's base URL: webhook URLs are `<base>/hooks/<task>/<token>`. */
  baseUrl(): string;
  /** The shortest interval a task may fire at (config scheduler.minIntervalMs). */
  readonly minIntervalMs: number;
  /** IANA zone of daily triggers. */
  readonly timeZone: string;
  /** Largest webhook body accepted, in bytes. */
  readonly webhookMaxBodyBytes: number;
  /** The signed webhook deliveries already taken (replays are refused). */
  readonly deliveries: WebhookDeliveryLedger;
  /** How far a signed delivery's timestamp may be from the clock, either way (config scheduler.webhookToleranceMs). */
  readonly webhookToleranceMs: number;
}
