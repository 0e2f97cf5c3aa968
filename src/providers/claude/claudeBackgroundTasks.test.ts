import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { ClaudeBackgroundTasks } from "./claudeBackgroundTasks.js";

/**
 * Claude Code's background work as the Agent SDK reports it (the
 * SDKTaskStartedMessage, SDKTaskUpdatedMessage and SDKTaskNotificationMessage
 * shapes of @anthropic-ai/claude-agent-sdk's sdk.d.ts), mapped to
 * background_task events.
 */

const base = { type: "system" as const, uuid: "00000000-0000-4000-8000-000000000001" as const, session_id: "s-1" };
const started = (taskId: string, fields: Record<string, unknown>): SDKMessage =>
  ({ ...base, subtype: "task_started", task_id: taskId, description: `work ${taskId}`, ...fields }) as unknown as SDKMessage;
const updated = (taskId: string, patch: Record<string, unknown>): SDKMessage => ({ ...base, subtype: "task_updated", task_id: taskId, patch }) as unknown as SDKMessage;
const settled = (taskId: string, status: "completed" | "failed" | "stopped"): SDKMessage =>
  ({ ...base, subtype: "task_notification", task_id: taskId, status, output_file: "/tmp/out", summary: "done" }) as unknown as SDKMessage;

describe("Claude Code's background tasks", () => {
  it("a background Bash command starts in the run that launched it and ends whenever it settles, after the turn too", () => {
    const tasks = new ClaudeBackgroundTasks();
    expect(tasks.map(started("b1", { task_type: "local_bash", is_backgrounded: true }), "run-1")).toEqual({
      type: "background_task",
      runId: "run-1",
      taskId: "b1",
      kind: "command",
      awaited: false,
      status: "started",
      title: "work b1",
    });
    expect(tasks.isRunning("b1")).toBe(true);
    // The turn is over: the end still names run-1.
    expect(tasks.map(settled("b1", "completed"), null)).toMatchObject({ runId: "run-1", taskId: "b1", status: "ended" });
    expect(tasks.isRunning("b1")).toBe(false);
    expect(tasks.map(settled("b1", "completed"), null)).toBeNull();
  });

  it("a background Task subagent is a subagent, a monitor a monitor, anything else a background_task", () => {
    const tasks = new ClaudeBackgroundTasks();
    expect(tasks.map(started("a1", { task_type: "local_agent", is_backgrounded: true }), "run-1")).toMatchObject({ kind: "subagent" });
    expect(tasks.map(started("m1", { task_type: "monitor", is_backgrounded: true }), "run-1")).toMatchObject({ kind: "monitor" });
    expect(tasks.map(started("w1", { task_type: "local_workflow", is_backgrounded: true }), "run-1")).toMatchObject({ kind: "background_task" });
  });

  it("a foreground task is not background work until it is moved to the background", () => {
    const tasks = new ClaudeBackgroundTasks();
    expect(tasks.map(started("f1", { task_type: "local_bash", is_backgrounded: false }), "run-1")).toBeNull();
    expect(tasks.map(updated("f1", { status: "running" }), "run-1")).toBeNull();
    expect(tasks.map(updated("f1", { is_backgrounded: true }), "run-1")).toMatchObject({ taskId: "f1", runId: "run-1", status: "started" });
    expect(tasks.map(settled("f1", "stopped"), null)).toMatchObject({ taskId: "f1", status: "ended" });
    // A foreground task that ends in the foreground reports nothing.
    expect(tasks.map(started("f2", { task_type: "local_bash" }), "run-1")).toBeNull();
    expect(tasks.map(settled("f2", "completed"), "run-1")).toBeNull();
  });

  it("leaves out ambient housekeeping tasks, tasks started outside a turn, and other messages", () => {
    const tasks = new ClaudeBackgroundTasks();
    expect(tasks.map(started("h1", { task_type: "local_bash", is_backgrounded: true, ambient: true }), "run-1")).toBeNull();
    expect(tasks.map(started("h2", { task_type: "local_bash", is_backgrounded: true }), null)).toBeNull();
    expect(tasks.map({ ...base, subtype: "status", status: null } as unknown as SDKMessage, "run-1")).toBeNull();
  });
});
