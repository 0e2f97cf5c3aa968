import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { WebhookDeliveryLedger } from "../../contracts/webhookDeliveries.js";
import { MemoryWebhookDeliveries } from "./memoryWebhookDeliveries.js";
import { SqliteWebhookDeliveries } from "./sqliteWebhookDeliveries.js";

/** One contract for both ledgers (a SQLite file, and memory), and what only the file gives: a second process and a restart see every claim. */

const dirs: string[] = [];
const opened: WebhookDeliveryLedger[] = [];
afterEach(() => {
  for (const ledger of opened.splice(0)) ledger.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function sqlitePath(): string {
  const dir = mkdtempSync(join(tmpdir(), "loom-deliveries-"));
  dirs.push(dir);
  return join(dir, "webhook-deliveries.db");
}

function track<L extends WebhookDeliveryLedger>(ledger: L): L {
  opened.push(ledger);
  return ledger;
}

const LEDGERS: readonly [string, () => WebhookDeliveryLedger][] = [
  ["sqlite", () => track(SqliteWebhookDeliveries.open(sqlitePath()))],
  ["memory", () => track(new MemoryWebhookDeliveries())],
];

const T = "scheduled-task:a";

for (const [name, open] of LEDGERS) {
  describe(`webhook delivery ledger: ${name}`, () => {
    it("takes a delivery once; any of its keys seen again answers the earlier record", () => {
      const ledger = open();
      expect(ledger.claim({ scheduledTaskId: T, keys: ["github:d1", "body:aa"], receivedAt: 1_000, forgetAt: null, fireCommandId: "cmd:fire:1" })).toEqual({ first: true });
      const again = ledger.claim({ scheduledTaskId: T, keys: ["github:d2", "body:aa"], receivedAt: 2_000, forgetAt: null, fireCommandId: "cmd:fire:2" });
      expect(again).toMatchObject({ first: false, earlier: { key: "body:aa", receivedAt: 1_000, fireCommandId: "cmd:fire:1", replays: 0 } });
      // Nothing of the refused claim was kept.
      expect(ledger.list(T).map((record) => record.key)).toEqual(["github:d1", "body:aa"]);
      // Keys are per task.
      expect(ledger.claim({ scheduledTaskId: "scheduled-task:b", keys: ["github:d1"], receivedAt: 2_000, forgetAt: null, fireCommandId: null })).toEqual({ first: true });
    });

    it("counts refused replays on the earlier record", () => {
      const ledger = open();
      ledger.claim({ scheduledTaskId: T, keys: ["ts:100:aa"], receivedAt: 1_000, forgetAt: 400_000, fireCommandId: null });
      expect(ledger.recordReplay(T, "ts:100:aa", 5_000)).toMatchObject({ replays: 1, lastReplayAt: 5_000 });
      expect(ledger.recordReplay(T, "ts:100:aa", 6_000)).toMatchObject({ replays: 2, lastReplayAt: 6_000 });
      expect(ledger.recordReplay(T, "ts:999:zz", 6_000)).toBeNull();
    });

    it("forgets a record once its forgetAt has passed, keeps those without one, and forgets a deleted task's", () => {
      const ledger = open();
      ledger.claim({ scheduledTaskId: T, keys: ["ts:1:aa"], receivedAt: 1_000, forgetAt: 301_000, fireCommandId: null });
      ledger.claim({ scheduledTaskId: T, keys: ["github:d1"], receivedAt: 1_000, forgetAt: null, fireCommandId: null });
      ledger.claim({ scheduledTaskId: T, keys: ["ts:2:bb"], receivedAt: 301_000, forgetAt: 601_000, fireCommandId: null });
      expect(ledger.list(T).map((record) => record.key)).toEqual(["ts:1:aa", "github:d1", "ts:2:bb"]);
      expect(ledger.claim({ scheduledTaskId: T, keys: ["ts:3:cc"], receivedAt: 301_001, forgetAt: 601_001, fireCommandId: null })).toEqual({ first: true });
      expect(ledger.list(T).map((record) => record.key)).toEqual(["github:d1", "ts:2:bb", "ts:3:cc"]);
      ledger.forgetTask(T);
      expect(ledger.list(T)).toEqual([]);
    });
  });
}

describe("webhook delivery ledger: the SQLite file", () => {
  it("is shared by every process on the state dir and survives a restart", () => {
    const path = sqlitePath();
    const first = track(SqliteWebhookDeliveries.open(path));
    const second = track(SqliteWebhookDeliveries.open(path));
    expect(first.claim({ scheduledTaskId: T, keys: ["github:d1"], receivedAt: 1_000, forgetAt: null, fireCommandId: "cmd:fire:1" })).toEqual({ first: true });
    expect(second.claim({ scheduledTaskId: T, keys: ["github:d1"], receivedAt: 1_001, forgetAt: null, fireCommandId: "cmd:fire:1" })).toMatchObject({ first: false });
    first.close();
    second.close();
    opened.splice(0);
    const reopened = track(SqliteWebhookDeliveries.open(path));
    expect(reopened.claim({ scheduledTaskId: T, keys: ["github:d1"], receivedAt: 9_000, forgetAt: null, fireCommandId: "cmd:fire:1" })).toMatchObject({ first: false, earlier: { receivedAt: 1_000 } });
  });
});
