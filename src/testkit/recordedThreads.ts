import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import type { Command } from "../contracts/commands.js";
import type { ProviderCapabilities } from "../contracts/capabilities.js";
import type { NormalizedProviderEvent } from "../contracts/providerEvents.js";
import type { ProviderFacts } from "../core/decision.js";
import { derive } from "../core/ids.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import { ClaudeTranscriptMapper, mapResult } from "../providers/claude/claudeEvents.js";
import { CodexEventMapper } from "../providers/codex/codexEvents.js";
import type { ServerNotification } from "../providers/codex/protocol.js";

/**
 * Threads built from the drivers' recorded transcripts (src/providers/codex
 * and claude fixtures/, real CLI recordings): each transcript goes through
 * its driver's real mapper and then through Loom's engine as the session
 * manager would feed it (session opened, attempt, turn started, items, usage,
 * turn completed), so the threads are what Loom stores for those turns.
 */

export interface RecordedTurn {
  readonly driver: "codex" | "claude";
  readonly scenario: string;
  readonly prompt: string;
  /** Normalized events under the placeholder run id "run"; deltas and output included. */
  readonly events: readonly NormalizedProviderEvent[];
}

/** The drivers' fixture folders: beside this file in src, or back in src from a compiled copy (dist-bench/src/testkit). */
const FIXTURES = [join(import.meta.dirname, "..", "providers"), join(import.meta.dirname, "..", "..", "..", "src", "providers")].find((dir) =>
  existsSync(join(dir, "codex", "fixtures")),
) ?? join(import.meta.dirname, "..", "providers");

function fixtureNames(driver: "codex" | "claude"): string[] {
  return readdirSync(join(FIXTURES, driver, "fixtures"))
    .filter((name) => name.endsWith(".json"))
    .map((name) => name.slice(0, -".json".length))
    .sort();
}

function readFixture(driver: "codex" | "claude", name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, driver, "fixtures", `${name}.json`), "utf8")) as Record<string, unknown>;
}

/** Every recorded transcript of the codex and claude drivers, mapped to normalized events. */
export function recordedTurns(): RecordedTurn[] {
  const turns: RecordedTurn[] = [];
  for (const scenario of fixtureNames("codex")) {
    const fixture = readFixture("codex", scenario) as { prompt: string; messages: { id?: unknown; method: string; params: unknown }[] };
    const mapper = new CodexEventMapper();
    const events = fixture.messages.filter((message) => message.id === undefined).flatMap((message) => mapper.map(message as ServerNotification, "run"));
    turns.push({ driver: "codex", scenario, prompt: fixture.prompt, events });
  }
  for (const scenario of fixtureNames("claude")) {
    const fixture = readFixture("claude", scenario) as { prompt: string; cwd: string; messages: SDKMessage[] };
    const mapper = new ClaudeTranscriptMapper(fixture.cwd);
    const events = fixture.messages.flatMap((message) => (message.type === "result" ? mapResult(message, "run", false) : mapper.map(message, "run")));
    turns.push({ driver: "claude", scenario, prompt: fixture.prompt, events });
  }
  return turns;
}

const CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: false,
  runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
  models: [],
  mcpTransport: "http",
};

/** Provider facts for the recorded drivers: instance ids `codex` and `claude`. */
export function recordedProviderFacts(id: string): ProviderFacts | null {
  return id === "codex" || id === "claude" ? { driver: id, capabilities: CAPABILITIES } : null;
}

async function must(orchestrator: Orchestrator, command: Command): Promise<void> {
  const receipt = await orchestrator.dispatch(command);
  if (receipt.status === "rejected") throw new Error(`${command.type} was rejected: ${receipt.rejection.code}: ${receipt.rejection.message}`);
}

/**
 * Create thread `threadId` and play `turns` into it, one run per turn, in
 * order. The orchestrator needs recordedProviderFacts. Each turn runs on the
 * provider instance named by its driver; a thread switching drivers is fine.
 */
export async function playRecordedThread(orchestrator: Orchestrator, threadId: string, turns: readonly RecordedTurn[], title = "recorded transcripts", projectId = "recorded"): Promise<void> {
  const first = turns[0];
  if (first === undefined) throw new Error("no turns to play");
  await must(orchestrator, {
    type: "thread.create",
    commandId: `cmd:${threadId}:create`,
    data: { threadId, projectId, title, modelSelection: { providerInstanceId: first.driver, model: null }, runtimeMode: "full-access" },
  });
  for (const [index, turn] of turns.entries()) {
    // Ids shaped like the ones Loom mints (prefix:uuid), so sizes on the wire are realistic.
    const runId = `run:${randomUUID()}`;
    const sessionId = derive.providerSessionForThread({ providerInstanceId: turn.driver, threadId, nativeSessionId: randomUUID() });
    const id = (suffix: string) => `cmd:${threadId}:${index}:${suffix}`;
    if (turn.driver !== orchestrator.state.threads.get(threadId)?.modelSelection?.providerInstanceId) {
      await must(orchestrator, { type: "thread.model-selection.set", commandId: id("model"), data: { threadId, modelSelection: { providerInstanceId: turn.driver, model: null } } });
    }
    await must(orchestrator, { type: "message.dispatch", commandId: id("send"), data: { threadId, text: turn.prompt, messageId: `message:${randomUUID()}`, runId } });
    await must(orchestrator, { type: "provider-runtime.session-opened", commandId: id("session"), data: { threadId, providerSessionId: sessionId, providerInstanceId: turn.driver, driver: turn.driver } });
    await must(orchestrator, { type: "provider-runtime.attempt-started", commandId: id("attempt"), data: { threadId, runId, providerSessionId: sessionId } });
    for (const [n, event] of turn.events.entries()) {
      const commandId = id(`event:${n}`);
      switch (event.type) {
        case "turn.started":
          await must(orchestrator, { type: "provider-runtime.turn-started", commandId, data: { threadId, runId, providerSessionId: sessionId, nativeThreadId: event.nativeThreadId ?? null, nativeTurnId: event.nativeTurnId ?? null } });
          break;
        case "item.completed":
          await must(orchestrator, { type: "provider-runtime.item-completed", commandId, data: { threadId, runId, driver: turn.driver, nativeItemId: event.itemId, item: event.item } });
          break;
        case "usage":
          await must(orchestrator, { type: "provider-runtime.usage-reported", commandId, data: { threadId, runId, usage: { inputTokens: event.inputTokens, outputTokens: event.outputTokens } } });
          break;
        case "turn.completed":
          await must(orchestrator, { type: "provider-runtime.turn-completed", commandId, data: { threadId, runId, status: event.status, error: event.error } });
          break;
        case "item.delta":
        case "item.output":
        case "limit":
        case "background_task":
          break;
        default: {
          const unexpected: never = event;
          throw new Error(`unexpected event ${JSON.stringify(unexpected)}`);
        }
      }
    }
    await must(orchestrator, { type: "provider-runtime.session-released", commandId: id("release"), data: { threadId, providerSessionId: sessionId, reason: "shutdown", message: "recorded turn over" } });
  }
}
