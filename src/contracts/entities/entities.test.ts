import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { CheckpointSchema, CheckpointScopeSchema } from "./checkpoints.js";
import { ContextHandoffSchema, ContextTransferSchema } from "./contextTransfers.js";
import { DelegatedTaskSchema } from "./delegatedTasks.js";
import { ProjectSchema, ProviderSessionSchema } from "./projects.js";
import { ExecutionNodeSchema, RunAttemptSchema, RunSchema, isTerminalRunStatus } from "./runs.js";
import { RuntimeRequestSchema } from "./runtimeRequests.js";
import { ScheduledTaskSchema } from "./scheduledTasks.js";
import { SubagentSchema } from "./subagents.js";

const at = "2026-01-01T00:00:00.000Z";
const times = { createdAt: at, updatedAt: at };

interface EntityCase {
  readonly name: string;
  readonly schema: z.ZodType;
  readonly sample: Record<string, unknown>;
  /** A field and a value the schema must refuse (a status outside the state machine when the entity has one). */
  readonly bad: readonly [string, unknown];
}

const cases: readonly EntityCase[] = [
  {
    name: "Run",
    schema: RunSchema,
    sample: {
      id: "run:1",
      threadId: "thread:1",
      ordinal: 1,
      kind: "delegated_task",
      status: "waiting_on_subagent",
      providerInstanceId: "codex",
      driver: "codex",
      modelSelection: { providerInstanceId: "codex", model: null },
      runtimeMode: "auto-accept-edits",
      interactionMode: "default",
      messageId: null,
      failure: null,
      queueRank: null,
      held: false,
      interruptRequestedAt: null,
      endReason: null,
      ...times,
      startedAt: at,
      endedAt: null,
    },
    bad: ["status", "rolled_back"],
  },
  {
    name: "RunAttempt",
    schema: RunAttemptSchema,
    sample: {
      id: "run-attempt:1",
      runId: "run:1",
      threadId: "thread:1",
      attemptOrdinal: 1,
      status: "abandoned",
      providerSessionId: null,
      providerThreadId: null,
      providerTurnId: null,
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: null, reasoningOutputTokens: null, costUsd: 0.01 },
      failure: { code: "provider_crashed", message: "exit 1" },
      ...times,
      endedAt: at,
    },
    bad: ["status", "queued"],
  },
  {
    name: "ExecutionNode",
    schema: ExecutionNodeSchema,
    sample: {
      id: "node:1",
      threadId: "thread:1",
      runId: "run:1",
      runAttemptId: null,
      parentNodeId: null,
      kind: "approval_gate",
      status: "rolled_back",
      label: null,
      ...times,
      endedAt: null,
    },
    bad: ["status", "done"],
  },
  {
    name: "Subagent",
    schema: SubagentSchema,
    sample: {
      id: "subagent:1",
      threadId: "thread:1",
      runId: "run:1",
      parentNodeId: "node:1",
      providerInstanceId: "claude",
      driver: "claude",
      childThreadId: "thread:2",
      origin: "app_delegated",
      agentLabel: "reviewer",
      prompt: "review this",
      result: null,
      status: "spawning",
      ...times,
      endedAt: null,
    },
    bad: ["status", "queued"],
  },
  {
    name: "RuntimeRequest",
    schema: RuntimeRequestSchema,
    sample: {
      id: "runtime-request:1",
      threadId: "thread:1",
      runId: "run:1",
      nodeId: null,
      kind: "mcp-elicitation",
      status: "expired",
      blocking: true,
      nativeRequestId: "7",
      payload: { command: "ls" },
      resolution: null,
      ...times,
      resolvedAt: null,
    },
    bad: ["status", "answered"],
  },
  {
    name: "CheckpointScope",
    schema: CheckpointScopeSchema,
    sample: { id: "checkpoint-scope:1", threadId: "thread:1", workspacePath: "/repo", ...times },
    bad: ["workspacePath", ""],
  },
  {
    name: "Checkpoint",
    schema: CheckpointSchema,
    sample: {
      id: "checkpoint:1",
      threadId: "thread:1",
      scopeId: "checkpoint-scope:1",
      ordinalWithinScope: 0,
      appRunOrdinal: 1,
      runId: "run:1",
      nodeId: null,
      ref: "refs/loom/checkpoints/1",
      status: "stale",
      files: [{ path: "b.ts", previousPath: "a.ts", kind: "renamed", additions: 0, deletions: 0, binary: false }],
      ...times,
    },
    bad: ["status", "ok"],
  },
  {
    name: "ContextHandoff",
    schema: ContextHandoffSchema,
    sample: {
      id: "context-handoff:1",
      threadId: "thread:1",
      sourceProviderInstanceId: "codex",
      targetProviderInstanceId: "claude",
      strategy: "delta_since_target_last_seen",
      status: "superseded",
      coveredRunOrdinals: { from: 1, to: 3 },
      summaryText: null,
      history: [{ runOrdinal: 3, role: "assistant", text: "done" }],
      delivery: { runId: "run:4", deliveredAt: at },
      ...times,
    },
    bad: ["status", "consumed"],
  },
  {
    name: "ContextTransfer",
    schema: ContextTransferSchema,
    sample: {
      id: "context-transfer:1",
      threadId: "thread:1",
      sourceThreadId: "thread:2",
      kind: "subagent_result",
      status: "consumed",
      subagentId: "subagent:1",
      runId: "run:2",
      text: "result",
      ...times,
      consumedAt: at,
    },
    bad: ["status", "ready"],
  },
  {
    name: "Project",
    schema: ProjectSchema,
    sample: { id: "project:1", root: "/repo", name: "repo", ...times },
    bad: ["root", ""],
  },
  {
    name: "ProviderSession",
    schema: ProviderSessionSchema,
    sample: {
      id: "provider-session:1",
      threadId: "thread:1",
      providerInstanceId: "codex",
      driver: "codex",
      status: "busy",
      nativeSessionId: null,
      nativeThreadId: "abc",
      startedAt: at,
      updatedAt: at,
      releasedAt: null,
      releaseReason: null,
    },
    bad: ["status", "running"],
  },
  {
    name: "DelegatedTask",
    schema: DelegatedTaskSchema,
    sample: {
      taskId: "subagent:1",
      parentThreadId: "thread:1",
      parentRunId: "run:1",
      parentNodeId: "node:1",
      childThreadId: "thread:2",
      childRunId: "run:2",
      childNodeId: "node:2",
      providerInstanceId: "claude",
      model: "sonnet",
      role: "review",
      title: "Review the diff",
      task: "Review the diff in src/core",
      mode: "async",
      runtimeMode: "approval-required",
      interactionMode: "plan",
      clientRequestId: "round-1",
      status: "waiting",
      summary: null,
      resultContextTransferId: null,
      wakePolicy: "on_completion",
      completionDelivery: "not_ready",
      cancelReason: null,
      cancelRequestedAt: null,
      depth: 1,
      notices: [{ kind: "question", requestId: "runtime-request:1", runId: "run:9", delivery: "queued" }],
      ...times,
    },
    bad: ["status", "spawning"],
  },
  {
    name: "ScheduledTask",
    schema: ScheduledTaskSchema,
    sample: {
      id: "scheduled-task:1",
      projectId: "project:1",
      title: "Triage",
      prompt: "triage new issues",
      trigger: { type: "daily", at: "09:30", weekdays: [1, 2, 3, 4, 5] },
      boundThreadId: null,
      enabled: true,
      overlap: "skip",
      providerInstanceId: "codex",
      model: null,
      runtimeMode: "approval-required",
      interactionMode: "default",
      createdBy: "user",
      createdByThreadId: null,
      ...times,
      nextFireAt: at,
      lastFire: null,
      fireCount: 0,
    },
    bad: ["trigger", { type: "cron", expression: "* * * * *" }],
  },
];

describe("entity schemas", () => {
  for (const c of cases) {
    it(`${c.name} accepts a valid sample and refuses ${c.bad[0]} = ${JSON.stringify(c.bad[1])}`, () => {
      expect(c.schema.parse(c.sample)).toEqual(c.sample);
      expect(c.schema.safeParse({ ...c.sample, [c.bad[0]]: c.bad[1] }).success).toBe(false);
    });
  }

  it("ScheduledTask accepts interval and webhook triggers and refuses a bad daily time", () => {
    const task = cases.find((c) => c.name === "ScheduledTask")!;
    const withTrigger = (trigger: unknown) => ({ ...task.sample, trigger });
    expect(ScheduledTaskSchema.safeParse(withTrigger({ type: "interval", everyMs: 3_600_000 })).success).toBe(true);
    expect(
      ScheduledTaskSchema.safeParse(
        withTrigger({ type: "webhook", signed: false, filters: [{ path: "action", equals: "opened" }], dedupeKey: null, tokenHash: "a".repeat(64) }),
      ).success,
    ).toBe(true);
    expect(ScheduledTaskSchema.safeParse(withTrigger({ type: "daily", at: "24:00", weekdays: null })).success).toBe(false);
  });

  it("ContextHandoff refuses an inverted run ordinal range", () => {
    const handoff = cases.find((c) => c.name === "ContextHandoff")!;
    expect(ContextHandoffSchema.safeParse({ ...handoff.sample, coveredRunOrdinals: { from: 3, to: 1 } }).success).toBe(false);
  });

  it("a checkpoint file recorded before `binary` existed decodes as not binary", () => {
    const checkpoint = cases.find((c) => c.name === "Checkpoint")!;
    const files = [{ path: "a.ts", previousPath: null, kind: "modified", additions: 1, deletions: 0 }];
    expect(CheckpointSchema.parse({ ...checkpoint.sample, files }).files[0]!.binary).toBe(false);
  });

  it("only completed, interrupted, failed and cancelled runs are terminal", () => {
    expect(isTerminalRunStatus("cancelled")).toBe(true);
    expect(isTerminalRunStatus("settling_background_work")).toBe(false);
  });
});
