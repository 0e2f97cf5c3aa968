import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScheduledFire } from "../contracts/entities/scheduledTasks.js";
import { script } from "../testkit/loomHarness.js";
import { waitForExit } from "../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../testkit/serveRig.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * kill -9 the built `loom serve` right after a timed fire committed (its run
 * decided, the agent's turn still going), restart on the same state dir, and
 * read the log: that instant fired once and has exactly one run, which the
 * restart ended; no instant fired twice. Real processes, a real SQLite file,
 * the real clock.
 */

interface TaskView {
  scheduledTaskId: string;
  lastFire: { runId: string | null; threadId: string | null } | null;
}

let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-sched-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "sched-crash-test");
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], scheduler: { minIntervalMs: 1_000 } }));
});
afterEach(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

function serve(): Promise<ServedLoom> {
  return rig.start();
}

/** The task's fires, and the run.created events per run id, straight from the log. */
function readLog(scheduledTaskId: string): { fires: ScheduledFire[]; runsCreated: Map<string, number>; runEnds: Map<string, string> } {
  const db = new Database(join(stateDir, "loom.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT type, data FROM events ORDER BY sequence").all() as { type: string; data: string }[];
    const fires: ScheduledFire[] = [];
    const runsCreated = new Map<string, number>();
    const runEnds = new Map<string, string>();
    for (const row of rows) {
      const data = JSON.parse(row.data) as unknown;
      if (row.type === "scheduled-task.updated") {
        const { task, fire } = data as { task: { id: string }; fire: ScheduledFire | null };
        if (task.id === scheduledTaskId && fire !== null) fires.push(fire);
      }
      if (row.type === "run.created" || row.type === "run.updated") {
        const run = (data as { run: { id: string; status: string } }).run;
        if (row.type === "run.created") runsCreated.set(run.id, (runsCreated.get(run.id) ?? 0) + 1);
        runEnds.set(run.id, run.status);
      }
    }
    return { fires, runsCreated, runEnds };
  } finally {
    db.close();
  }
}

describe("a crash right after a fire", () => {
  it("keeps that instant to one fire and one run, ended by the restart, and never fires an instant twice", async () => {
    const first = await serve();
    const { scheduledTaskId } = await first.client.ok<{ scheduledTaskId: string }>("schedule_task", {
      title: "Crash in the middle",
      prompt: script({ sleep: 60_000 }, { say: "never" }),
      trigger: { type: "interval", everyMs: 1_000 },
    });
    const fired = await pollUntil(
      () => first.client.ok<{ tasks: TaskView[] }>("list_scheduled_tasks", {}),
      (list) => list.tasks.some((task) => task.scheduledTaskId === scheduledTaskId && task.lastFire?.runId != null),
      "the first timed fire",
    );
    const runId = fired.tasks.find((task) => task.scheduledTaskId === scheduledTaskId)!.lastFire!.runId!;

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");
    const before = readLog(scheduledTaskId);
    const killedFire = before.fires.find((fire) => fire.runId === runId)!;
    expect(killedFire).toBeDefined();

    const second = await serve();
    // The restart ends the lost run; then pause the task so the log stops growing.
    await pollUntil(() => Promise.resolve(readLog(scheduledTaskId)), (log) => log.runEnds.get(runId) === "interrupted", "the lost run to end");
    await second.client.ok("update_scheduled_task", { scheduledTaskId, enabled: false });

    const after = readLog(scheduledTaskId);
    expect(after.fires.filter((fire) => fire.dueAt === killedFire.dueAt)).toHaveLength(1);
    expect(after.runsCreated.get(runId)).toBe(1);
    const dueTimes = after.fires.map((fire) => fire.dueAt);
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    // Every fire that started a run started its own.
    const runIds = after.fires.flatMap((fire) => (fire.runId === null ? [] : [fire.runId]));
    expect(new Set(runIds).size).toBe(runIds.length);
    for (const id of runIds) expect(after.runsCreated.get(id)).toBe(1);
  });
});
