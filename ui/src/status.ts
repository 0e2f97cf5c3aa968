import type { RunStatus } from "../../src/contracts/entities/runs.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";

/** What a thread's badge says. */
export const BadgeKind = {
  idle: "idle",
  queued: "queued",
  running: "running",
  waitingApproval: "waiting-approval",
  waitingInput: "waiting-input",
  waitingChildren: "waiting-children",
  snoozed: "snoozed",
  done: "done",
  interrupted: "interrupted",
  failed: "failed",
} as const;
export type BadgeKind = (typeof BadgeKind)[keyof typeof BadgeKind];

/** Every run status's badge: a table the compiler checks is total. */
const BADGE_OF_RUN_STATUS: { readonly [S in RunStatus]: BadgeKind } = {
  queued: "queued",
  starting: "running",
  running: "running",
  waiting_on_approval: "waiting-approval",
  waiting_on_user_input: "waiting-input",
  waiting_on_subagent: "waiting-children",
  settling_background_work: "waiting-children",
  completed: "done",
  interrupted: "interrupted",
  failed: "failed",
  cancelled: "interrupted",
};

export const BADGE_LABEL: { readonly [K in BadgeKind]: string } = {
  idle: "idle",
  queued: "queued",
  running: "running",
  "waiting-approval": "needs approval",
  "waiting-input": "needs answer",
  "waiting-children": "waiting on children",
  snoozed: "snoozed",
  done: "done",
  interrupted: "interrupted",
  failed: "failed",
};

export function badgeOfRunStatus(status: RunStatus | null): BadgeKind {
  return status === null ? "idle" : BADGE_OF_RUN_STATUS[status];
}

/** A thread's own badge: snoozed, else its latest run's status, where a running agent blocked in a wait for other threads waits on children. */
export function badgeOf(row: Pick<ThreadShell, "runStatus" | "snoozedUntil" | "inWait">, now = Date.now()): BadgeKind {
  if (row.snoozedUntil !== null && Date.parse(row.snoozedUntil) > now) return "snoozed";
  const badge = badgeOfRunStatus(row.runStatus);
  return badge === "running" && row.inWait ? "waiting-children" : badge;
}

/** A thread whose own turn is over (or never began) while threads it started still work waits on them. */
export function withWorkingChildren(badge: BadgeKind, childBadges: readonly BadgeKind[]): BadgeKind {
  return (badge === "done" || badge === "idle") && childBadges.some(isLive) ? "waiting-children" : badge;
}

/** Badges that mean a person is needed. */
export function needsYou(kind: BadgeKind): boolean {
  return kind === "waiting-approval" || kind === "waiting-input" || kind === "failed";
}

export function isLive(kind: BadgeKind): boolean {
  return kind === "running" || kind === "queued" || kind === "waiting-approval" || kind === "waiting-input" || kind === "waiting-children";
}
