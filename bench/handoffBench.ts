import type { Command } from "../src/contracts/commands.js";
import type { ProviderCapabilities } from "../src/contracts/capabilities.js";
import type { Run } from "../src/contracts/entities/runs.js";
import { runEvent, threadEvent, turnItemEvent } from "../src/contracts/events.js";
import type { AppThread } from "../src/contracts/thread.js";
import type { TurnItem } from "../src/contracts/turnItems.js";
import { decide } from "../src/core/decider.js";
import { DEFAULT_DELEGATION_LIMITS, type DecideContext } from "../src/core/decision.js";
import { makeAllocate } from "../src/core/ids.js";
import { buildTranscript, transcriptRuns } from "../src/core/lineage/transcript.js";
import { type OrchestrationState, evolve, initialState } from "../src/core/state.js";
import { fmt, now, percentile, printTable, seconds } from "./stats.js";

/**
 * Handoff build time for a long thread (spec 004 §1 invariant 5): the
 * decision that starts a provider-switched thread's first run on its new
 * provider builds the transcript of every run the target has not seen, within
 * 16,000 tokens and 64,000 bytes. Baseline, measured in the same run: the same
 * message.dispatch decision on the same thread with no handoff pending.
 * Decisions are pure and leave the state alone, so each is repeated on one state.
 */

const AT = "2026-01-01T00:00:00.000Z";
const CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: false,
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  models: ["m"],
  mcpTransport: "http",
};

function context(): DecideContext {
  let counter = 0;
  return {
    now: AT,
    allocate: makeAllocate(() => `bench-${(counter += 1)}`),
    providers: (id) => (id === "a" || id === "b" ? { driver: "scripted", capabilities: CAPABILITIES } : null),
    limits: DEFAULT_DELEGATION_LIMITS,
  };
}

function thread(id: string): AppThread {
  return {
    id, projectId: "bench", title: "Long thread", titleRegenerating: false, providerInstanceId: "a", modelSelection: { providerInstanceId: "a", model: "m" },
    runtimeMode: "full-access", interactionMode: "default", worktreePath: null, branch: null, pullRequests: [],
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" }, queuedRuns: [],
    createdBy: "user", creationSource: "api", createdAt: AT, updatedAt: AT, archivedAt: null, deletedAt: null,
    settledAt: null, autoSettle: true, snoozedUntil: null, snoozedAt: null, pinnedRank: null, activeRank: null,
    lastVisitedAt: null, markedUnreadAt: null, pendingBackgroundTasks: [],
  };
}

/** A thread of `runs` completed runs on `a`, each a user message and an assistant reply of the given sizes. */
function longThread(threadId: string, runs: number, userChars: number, assistantChars: number): OrchestrationState {
  const state = initialState();
  const record = thread(threadId);
  evolve(state, threadEvent("thread.created", record));
  let position = 0;
  for (let k = 1; k <= runs; k++) {
    const run: Run = {
      id: `run:${k}`, threadId, ordinal: k, kind: "user_turn", status: "completed", providerInstanceId: "a", driver: "scripted",
      modelSelection: record.modelSelection, runtimeMode: "full-access", interactionMode: "default", messageId: `message:${k}`,
      failure: null, queueRank: null, held: false, interruptRequestedAt: null, endReason: "completed",
      createdAt: AT, updatedAt: AT, startedAt: AT, endedAt: AT,
    };
    evolve(state, runEvent("run.created", run));
    const base = { threadId, runId: run.id, createdAt: AT, updatedAt: AT };
    const user: TurnItem = { ...base, id: `item:${k}:u`, position: position++, type: "user_message", messageId: `message:${k}`, text: `question ${k} ${"q".repeat(userChars)}`, createdBy: "user", creationSource: "api" };
    const reply: TurnItem = { ...base, id: `item:${k}:a`, position: position++, type: "assistant_message", messageId: `reply:${k}`, text: `answer ${k} ${"a".repeat(assistantChars)}`, streaming: false, createdBy: "agent", creationSource: "provider" };
    evolve(state, turnItemEvent(user));
    evolve(state, turnItemEvent(reply));
  }
  return state;
}

function apply(state: OrchestrationState, command: Command): void {
  const decision = decide(state, command, context());
  if (decision.kind === "rejected") throw new Error(`${command.type} rejected: ${decision.rejection.message}`);
  for (const event of decision.events) evolve(state, { type: event.type, streamId: event.streamId, data: event.data } as Parameters<typeof evolve>[1]);
}

/** Median and p95 milliseconds of `repeat` calls, after `warmup` unmeasured ones. */
function time(repeat: number, warmup: number, body: () => void): { p50: number; p95: number } {
  for (let i = 0; i < warmup; i++) body();
  const samples: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const start = now();
    body();
    samples.push(seconds(start) * 1_000);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

function dispatch(threadId: string): Command {
  return { type: "message.dispatch", commandId: "cmd:bench-send", data: { threadId, text: "go on", runId: "run:next", messageId: "message:next" } };
}

export async function runHandoffBench(options: { runs: number; repeat: number }): Promise<void> {
  const rows: string[][] = [["measure", "p50 ms", "p95 ms", "p50 ratio", "handoff bytes"]];
  for (const [label, userChars, assistantChars] of [
    ["short messages (~40 B a run)", 10, 10],
    ["long messages (~2 KB a run)", 400, 1_600],
  ] as const) {
    const plain = longThread("thread:plain", options.runs, userChars, assistantChars);
    const switched = longThread("thread:switched", options.runs, userChars, assistantChars);
    apply(switched, { type: "provider.switch", commandId: "cmd:switch", data: { threadId: "thread:switched", providerInstanceId: "b" } });
    const baseline = time(options.repeat, 20, () => decide(plain, dispatch("thread:plain"), context()));
    const withHandoff = time(options.repeat, 20, () => decide(switched, dispatch("thread:switched"), context()));
    const fork = time(options.repeat, 20, () =>
      decide(plain, { type: "thread.fork", commandId: "cmd:fork", data: { sourceThreadId: "thread:plain", threadId: "thread:fork", providerInstanceId: "b", model: null, runtimeMode: "full-access", interactionMode: "default" } }, context()),
    );
    const runs = (plain.threadRuns.get("thread:plain") ?? []).map((id) => plain.runs.get(id)!);
    let bytes = 0;
    const transcriptOnly = time(options.repeat, 20, () => {
      bytes = buildTranscript({ tag: "handoff", attributes: [], instructions: "Continue.", runs: transcriptRuns(plain.turnItems.get("thread:plain") ?? [], runs), readMore: "t3_thread_read" }).bytes;
    });
    const ratio = (value: number) => (value / baseline.p50).toFixed(2);
    rows.push(
      [`${label}: message.dispatch, no handoff (baseline)`, baseline.p50.toFixed(3), baseline.p95.toFixed(3), "1.00", "-"],
      [`${label}: message.dispatch building the handoff`, withHandoff.p50.toFixed(3), withHandoff.p95.toFixed(3), ratio(withHandoff.p50), fmt(bytes)],
      [`${label}: thread.fork at the newest run`, fork.p50.toFixed(3), fork.p95.toFixed(3), ratio(fork.p50), fmt(bytes)],
      [`${label}: the transcript alone (grouping + rendering)`, transcriptOnly.p50.toFixed(3), transcriptOnly.p95.toFixed(3), ratio(transcriptOnly.p50), fmt(bytes)],
    );
  }
  printTable(`Handoff build for a ${fmt(options.runs)}-run thread (decisions, ${options.repeat} repeats each)`, rows);
  await Promise.resolve();
}
