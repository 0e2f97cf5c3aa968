import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { type Command, decodeCommand } from "../../contracts/commands.js";
import { decodeDomainEvent } from "../../contracts/events.js";
import type { Decision } from "../../core/decision.js";
import { runSeed } from "./runner.js";
import { failureReport } from "./testSuiteSeeds.js";

/**
 * Everything the decider is given and produces goes through the schema
 * tables (contracts/commands.ts, contracts/events.ts) without loss: the
 * simulator drives the real engine, app layer and providers for a range of
 * seeds, and every dispatched command and every event of every decision is
 * encoded as the store keeps it (JSON), decoded through its table, and must
 * come back known and equal. The committed logs are replayed the same way.
 */

const SEEDS = { first: 1, count: 40 };

/** The value as the store and the wire keep it. */
const encoded = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

interface Seen {
  readonly commandTypes: Set<string>;
  readonly eventTypes: Set<string>;
  readonly problems: string[];
  decisions: number;
  events: number;
}

function checkDecision(seen: Seen, command: Command, decision: Decision): void {
  seen.decisions += 1;
  seen.commandTypes.add(command.type);
  const raw = encoded(command);
  const parsed = decodeCommand(command.type, raw);
  if (!parsed.success) seen.problems.push(`${command.type} does not decode: ${parsed.error.message}`);
  else if (!isDeepStrictEqual(encoded(parsed.data), raw)) seen.problems.push(`${command.type} decodes to something else: ${JSON.stringify(parsed.data)}`);
  if (decision.kind === "rejected") return;
  for (const event of decision.events) {
    seen.events += 1;
    seen.eventTypes.add(event.type);
    checkEvent(seen, `${command.type} → ${event.type}`, encoded(event));
  }
}

function checkEvent(seen: Seen, what: string, raw: unknown): void {
  try {
    const decoded = decodeDomainEvent(raw);
    if (decoded.type === "unknown") seen.problems.push(`${what}: decodes as unknown`);
    else if (!isDeepStrictEqual(encoded(decoded), raw)) seen.problems.push(`${what}: decodes to something else`);
  } catch (error) {
    seen.problems.push(`${what}: ${String(error)}`);
  }
}

describe("decider output through the schema tables", () => {
  const seen: Seen = { commandTypes: new Set(), eventTypes: new Set(), problems: [], decisions: 0, events: 0 };

  for (let seed = SEEDS.first; seed < SEEDS.first + SEEDS.count; seed++) {
    it(`seed ${seed}: every command and event decodes to itself, and so does the committed log`, async () => {
      const before = seen.problems.length;
      const result = await runSeed({ seed, onDecision: (command, decision) => checkDecision(seen, command, decision) });
      expect(result.violations, failureReport(result)).toEqual([]);
      for (const stored of result.log) checkEvent(seen, `log #${stored.sequence} ${stored.type}`, encoded({ type: stored.type, streamId: stored.streamId, data: stored.data }));
      expect(seen.problems.slice(before)).toEqual([]);
    });
  }

  it("saw a wide range of commands and events, so the check above is not vacuous", () => {
    expect(seen.decisions).toBeGreaterThan(1_000);
    expect(seen.events).toBeGreaterThan(1_000);
    expect(seen.commandTypes.size).toBeGreaterThanOrEqual(20);
    expect(seen.eventTypes.size).toBeGreaterThanOrEqual(12);
    expect([...seen.commandTypes]).toEqual(expect.arrayContaining(["thread.create", "message.dispatch", "delegated_task.request", "provider-runtime.item-completed", "provider-runtime.turn-completed"]));
  });
});
