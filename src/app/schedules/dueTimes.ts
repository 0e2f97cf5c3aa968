import { Cron } from "croner";
import type { Trigger } from "../../contracts/entities/scheduledTasks.js";

/**
 * Due instants of timed triggers. Interval instants are the previous due
 * instant plus `everyMs` (the first is one interval after saving); daily
 * instants are "HH:MM" wall-clock times in the scheduler's time zone (the
 * server's local one unless configured), on the listed weekdays, with
 * daylight-saving gaps and repeats handled by croner.
 */
export type TimedTrigger = Extract<Trigger, { type: "interval" | "daily" }>;

/** The zone daily triggers use: the configured one, else the process's local zone. */
export function schedulerTimeZone(configured: string | null): string {
  return configured ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** True when `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function dailyCron(trigger: Extract<Trigger, { type: "daily" }>, timeZone: string): Cron {
  const [hours, minutes] = trigger.at.split(":");
  const days = trigger.weekdays === null ? "*" : [...new Set(trigger.weekdays)].sort().join(",");
  return new Cron(`${Number(minutes)} ${Number(hours)} * * ${days}`, { timezone: timeZone, paused: true });
}

/** The first due instant strictly after `afterMs`, for a trigger whose previous instant was `previousMs` (null: none yet). */
export function nextDueAfter(trigger: TimedTrigger, afterMs: number, previousMs: number | null, timeZone: string): number {
  if (trigger.type === "interval") {
    if (previousMs === null) return afterMs + trigger.everyMs;
    const steps = Math.max(1, Math.floor((afterMs - previousMs) / trigger.everyMs) + 1);
    return previousMs + steps * trigger.everyMs;
  }
  const next = dailyCron(trigger, timeZone).nextRun(new Date(afterMs));
  if (next === null) throw new Error(`daily trigger ${trigger.at} has no next run`);
  return next.getTime();
}

/** How many due instants fall in [dueMs, nowMs], counting dueMs itself; at least 1. Bounded: a long downtime counts up to `cap`. */
export function instantsThrough(trigger: TimedTrigger, dueMs: number, nowMs: number, timeZone: string, cap = 10_000): number {
  if (trigger.type === "interval") return Math.min(cap, Math.max(1, Math.floor((nowMs - dueMs) / trigger.everyMs) + 1));
  let count = 1;
  let at = dueMs;
  for (;;) {
    const next = nextDueAfter(trigger, at, null, timeZone);
    if (next > nowMs || count >= cap) return count;
    count += 1;
    at = next;
  }
}
