import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIST_TESTKIT, spawnServe, waitForExit } from "../testkit/loomProcess.js";

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-crash-"));
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

/** Start the writer, wait until it has committed `rounds` rounds, then SIGKILL it mid-stream. */
async function killWriterAfter(databasePath: string, rounds: number): Promise<void> {
  const child = spawn(process.execPath, [join(DIST_TESTKIT, "crashWriter.js"), databasePath], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes(`committed ${rounds}\n`)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
  });
  child.kill("SIGKILL");
  const exit = await waitForExit(child);
  expect(exit.signal).toBe("SIGKILL");
}

describe("crash safety", () => {
  it("leaves a consistent prefix after SIGKILL and loom serve restarts on it with the same threads", async () => {
    const databasePath = join(stateDir, "loom.db");
    await killWriterAfter(databasePath, 5);

    const db = new Database(databasePath, { readonly: true });
    const sequences = db.prepare("SELECT sequence FROM events ORDER BY sequence").pluck().all() as number[];
    expect(sequences.length).toBeGreaterThanOrEqual(500);
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
    const receipts = db.prepare("SELECT command_id, body FROM receipts").all() as { command_id: string; body: string }[];
    const eventsPerCommand = new Map(
      (db.prepare("SELECT command_id, COUNT(*) AS n FROM events GROUP BY command_id").all() as { command_id: string; n: number }[]).map((r) => [r.command_id, r.n]),
    );
    for (const row of receipts) {
      const receipt = JSON.parse(row.body) as { status: string; eventCount?: number };
      expect(receipt.status).toBe("accepted");
      expect(eventsPerCommand.get(row.command_id) ?? 0).toBe(receipt.eventCount);
    }
    const receiptIds = new Set(receipts.map((r) => r.command_id));
    for (const commandId of eventsPerCommand.keys()) expect(receiptIds.has(commandId)).toBe(true);
    const created = db.prepare("SELECT COUNT(*) FROM events WHERE type = 'thread.created'").pluck().get() as number;
    db.close();

    const serve = await spawnServe(["--port", "0", "--state-dir", stateDir]);
    try {
      const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
      const res = await fetch(`${serve.url}/api/orchestration/shell-snapshot?includeArchived=1&limit=1000`, { headers: { authorization: `Bearer ${token}` } });
      const shell = (await res.json()) as { snapshotSequence: number; threads: unknown[]; total: number };
      expect(shell.total).toBe(created);
      expect(shell.threads.length).toBe(Math.min(created, 1000));
      expect(shell.snapshotSequence).toBe(sequences.length);
    } finally {
      serve.child.kill("SIGTERM");
      await waitForExit(serve.child);
    }
  });
});
