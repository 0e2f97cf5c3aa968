import type { ScheduledTaskFireCommand, ScheduledTaskSaveCommand } from "../../contracts/commands/scheduleCommands.js";
import { cmd } from "./fixtures.js";

/** Fixtures for scheduled-task tests: one task, an interval trigger due a minute before TEST_NOW. */

export const TASK = "scheduled-task:1";
export const DUE = "2026-03-01T11:59:00.000Z";
export const NEXT = "2026-03-01T12:59:00.000Z";

/** scheduled-task.save creating TASK (approval-required, unbound, on the steerable provider); override what the test is about. */
export function save(overrides: Partial<ScheduledTaskSaveCommand["data"]> = {}) {
  return cmd("scheduled-task.save", {
    scheduledTaskId: TASK,
    mode: "create",
    projectId: "project:1",
    title: "Nightly audit",
    prompt: "audit the dependencies",
    trigger: { type: "interval", everyMs: 3_600_000 },
    boundThreadId: null,
    enabled: true,
    overlap: "skip",
    providerInstanceId: "steerable",
    model: "m1",
    runtimeMode: "approval-required",
    interactionMode: "default",
    createdBy: "user",
    createdByThreadId: null,
    nextFireAt: DUE,
    ...overrides,
  });
}

/** A timed scheduled-task.fire of TASK at DUE. */
export function fire(overrides: Partial<ScheduledTaskFireCommand["data"]> = {}) {
  return cmd("scheduled-task.fire", {
    scheduledTaskId: TASK,
    dueAt: DUE,
    cause: "timer",
    instants: 1,
    nextFireAt: NEXT,
    threadId: "thread:fire-1",
    runId: "run:fire-1",
    messageId: "message:fire-1",
    context: null,
    ...overrides,
  });
}
