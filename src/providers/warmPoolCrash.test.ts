import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionListResult } from "../app/sessions.js";
import { runLoom } from "../testkit/cliRun.js";
import { waitForExit } from "../testkit/loomProcess.js";
import { pollUntil } from "../testkit/poll.js";
import { type ServedLoom, ServeRig } from "../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` with a full warm pool, restart on the same
 * state dir: nothing of the pool was recorded (no session to reconcile), no
 * process the killed server started is left, and the new server fills a new
 * pool (docs/warm-pools.md, Accounting).
 */

let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-pool-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "pool-crash-test");
  mkdirSync(stateDir);
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], providers: [{ id: "scripted", driver: "scripted", pool: { size: 3 } }] }));
});
afterEach(async () => {
  await rig.close();
  rmSync(dir, { recursive: true, force: true });
});

async function list(served: ServedLoom): Promise<SessionListResult> {
  const res = await fetch(`${served.serve.url}/api/sessions`, { headers: { authorization: `Bearer ${served.token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as SessionListResult;
}

function fullPool(served: ServedLoom): Promise<SessionListResult> {
  return pollUntil(() => list(served), (l) => l.warm.length === 3, "a full warm pool");
}

/** Live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((line) => Number(line.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when nothing matches
  }
}

describe("crash with a full warm pool", () => {
  it("leaves no session to reconcile and no process behind, and the next server fills a new pool", async () => {
    const first = await rig.start();
    const before = await fullPool(first);
    const pid = first.serve.child.pid!;

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");
    expect(childrenOf(pid)).toEqual([]);

    const second = await rig.start();
    const after = await fullPool(second);
    expect(after.sessions).toEqual([]);
    const old = new Set(before.warm.map((w) => w.warmSessionId));
    expect(after.warm.filter((w) => old.has(w.warmSessionId))).toEqual([]);
    const text = await runLoom(["sessions", "list", "--state-dir", stateDir]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^no open sessions\nwarm:scripted:[0-9a-f]{8}\n {2}warm: scripted \(scripted\), since \S+, no thread yet\n/);
    // The pool still hands out after the restart: a thread's first session comes from it.
    const launched = await second.client.ok<{ threadId: string }>("t3_thread_launch", { title: "after", message: "hello" });
    const held = await pollUntil(() => list(second), (l) => l.sessions.some((s) => s.threadId === launched.threadId), "the thread's session");
    expect(held.sessions.find((s) => s.threadId === launched.threadId)?.fromPool).toBe(true);
  });
});
