import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { NormalizedProviderEvent } from "../events.js";
import { parseClaudeOptions } from "./options.js";
import { openClaudeWarm } from "./warm.js";
import { buildQueryOptions } from "./queryOptions.js";
import { ClaudeSession } from "./session.js";
import { FakeClaude } from "./testing/fakeQuery.js";

/**
 * Output schemas held natively (docs/delegation.md, "Structured results"):
 * Claude Code takes a schema (`outputFormat`) only when it starts, so the
 * session starts with the schema its first turn needs and restarts Claude
 * Code, continuing its saved session, when a turn needs another. The SDK
 * boundary is a fake query here; the real Claude Code runs the same path in
 * claude.e2e.test.ts.
 */

const SCHEMA = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } as const;

let session: ClaudeSession | null = null;
afterEach(async () => {
  await session?.stop();
  session = null;
});

function open(fake: FakeClaude, events: NormalizedProviderEvent[], logs: string[], options: { persist: boolean; outputSchema: typeof SCHEMA | null }) {
  session = new ClaudeSession({
    providerSessionId: "provider-session:schema",
    cwd: "/work",
    query: fake.query,
    buildOptions: (hooks) =>
      buildQueryOptions(
        {
          cwd: "/work",
          model: null,
          runtimeMode: "full-access",
          interactionMode: "default",
          mcp: null,
          configDir: "/tmp/cfg",
          persist: options.persist,
          options: parseClaudeOptions({ id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: {} }),
          baseEnv: {},
          isRoot: false,
        },
        hooks,
      ),
    secret: null,
    startupTimeoutMs: 1_000,
    onEvent: (event) => events.push(event),
    log: (line) => logs.push(line),
    cleanup: () => Promise.resolve(),
    nativeSchema: options.persist,
    outputSchema: options.outputSchema,
  });
  return session;
}

/** Claude Code's result of a turn that ended on its StructuredOutput tool. */
function structuredResult(sessionId: string, uuid: string, value: unknown): SDKMessage {
  return {
    type: "result",
    subtype: "success",
    uuid: "result-1",
    session_id: sessionId,
    user_message_uuids: [uuid],
    result: JSON.stringify(value),
    structured_output: value,
    usage: { input_tokens: 3, output_tokens: 2 },
    total_cost_usd: 0,
    is_error: false,
    num_turns: 1,
    duration_ms: 1,
    duration_api_ms: 1,
    stop_reason: "tool_use",
    modelUsage: {},
    permission_denials: [],
  } as unknown as SDKMessage;
}

async function until(events: NormalizedProviderEvent[], runId: string): Promise<void> {
  while (!events.some((event) => event.type === "turn.completed" && event.runId === runId)) await new Promise((resolve) => setImmediate(resolve));
}

describe("claude session: output schemas", () => {
  it("starts Claude Code with the first turn's schema and answers with the checked value; a turn without one continues the session in a new launch", async () => {
    const fake = new FakeClaude();
    const events: NormalizedProviderEvent[] = [];
    const logs: string[] = [];
    const s = open(fake, events, logs, { persist: true, outputSchema: SCHEMA });
    await s.open();
    expect(fake.queries).toHaveLength(1);
    expect(fake.last.options.outputFormat).toEqual({ type: "json_schema", schema: SCHEMA });

    // The schema turn runs on the launch that has its schema: no restart.
    await s.startTurn({ runId: "run-1", input: "answer", outputSchema: SCHEMA });
    const sent = await fake.last.waitForReceived(1);
    expect(fake.queries).toHaveLength(1);
    const firstSession = fake.last.options.sessionId!;
    fake.last.send(structuredResult(firstSession, sent.uuid!, { ok: true }));
    await until(events, "run-1");
    const answered = events.filter((event) => event.runId === "run-1").map((event) => event.type === "item.completed" ? event.item : event.type);
    expect(answered).toEqual(["turn.started", { kind: "assistant_message", text: '{"ok":true}' }, "usage", "turn.completed"]);
    expect(events.find((event) => event.type === "turn.completed" && event.runId === "run-1")).toMatchObject({ status: "completed" });

    // A follow-up owes no structured result: Claude Code restarts without the schema, continuing its saved session.
    const first = fake.last;
    await s.startTurn({ runId: "run-2", input: "and why?" });
    expect(first.closed).toBe(true);
    expect(fake.queries).toHaveLength(2);
    expect(fake.last.options.outputFormat).toBeUndefined();
    expect(fake.last.options.resume).toBe(firstSession);
    expect((await fake.last.waitForReceived(1)).message).toMatchObject({ role: "user" });
    expect(logs).toContainEqual(`loom: claude: session provider-session:schema: restarting Claude Code without an output schema, continuing session ${firstSession}`);
  });

  it("a session opened without a schema starts its first schema turn in a fresh launch with it (nothing to continue yet)", async () => {
    const fake = new FakeClaude();
    const s = open(fake, [], [], { persist: true, outputSchema: null });
    await s.open();
    expect(fake.last.options.outputFormat).toBeUndefined();
    await s.startTurn({ runId: "run-1", input: "answer", outputSchema: SCHEMA });
    expect(fake.queries).toHaveLength(2);
    expect(fake.queries[0]!.closed).toBe(true);
    expect(fake.last.options.outputFormat).toEqual({ type: "json_schema", schema: SCHEMA });
    expect(fake.last.options.resume).toBeUndefined();
    await fake.last.waitForReceived(1);
  });

  it("a session Claude Code does not save never binds a schema: it could not continue after a restart", async () => {
    const fake = new FakeClaude();
    const s = open(fake, [], [], { persist: false, outputSchema: SCHEMA });
    await s.open();
    expect(fake.last.options.outputFormat).toBeUndefined();
    await s.startTurn({ runId: "run-1", input: "answer", outputSchema: SCHEMA });
    expect(fake.queries).toHaveLength(1);
    await fake.last.waitForReceived(1);
  });

  it("a warm session, started without a schema, fits no thread that owes a structured result", async () => {
    const fake = new FakeClaude();
    const home = mkdtempSync(join(tmpdir(), "loom-claude-warm-"));
    const like = { cwd: "/work", runtimeMode: "full-access", interactionMode: "default", model: null } as const;
    const options = parseClaudeOptions({ id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: {} });
    const warm = await openClaudeWarm({ instance: { id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: {} }, home: join(home, ".warm-1"), like }, { options, query: fake.query, isRoot: false, log: () => undefined });
    try {
      expect(fake.last.options.outputFormat).toBeUndefined();
      expect(warm.fits(like)).toBe(true);
      expect(warm.fits({ ...like, outputSchema: null })).toBe(true);
      expect(warm.fits({ ...like, outputSchema: SCHEMA })).toBe(false);
    } finally {
      await warm.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
