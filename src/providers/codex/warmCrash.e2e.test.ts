import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionListResult } from "../../app/sessions.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { pollUntil } from "../../testkit/poll.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` holding a full pool of real `codex
 * app-server` processes, then start it again on the same state dir: every
 * warm codex process ended with the server (its stdin closed), the new server
 * removes the warm homes the old one left and fills a new pool
 * (docs/warm-pools.md, Accounting).
 */

const SIZE = 2;
let dir: string;
let stateDir: string;
let rig: ServeRig;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-codex-pool-crash-"));
  stateDir = join(dir, "state");
  rig = new ServeRig(stateDir, "codex-pool-crash-test");
  mkdirSync(stateDir);
  const codex = { id: "codex", driver: "codex", pool: { size: SIZE }, options: { modelProvider: { id: "loomtest", baseUrl: "http://127.0.0.1:9/v1", envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } } };
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], providers: [codex] }));
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
  return pollUntil(() => list(served), (l) => l.warm.length === SIZE, "a full codex pool", 60_000);
}

/** Live processes whose CODEX_HOME lies in this test's state dir (the warm app-servers and their native binaries). */
function codexProcesses(): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (env.some((entry) => entry.startsWith("CODEX_HOME=") && entry.includes(stateDir))) pids.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

function warmHomes(): string[] {
  return readdirSync(join(stateDir, "agents", "codex")).filter((name) => name.startsWith(".warm-"));
}

describe("crash with a full codex pool", () => {
  it("leaves no codex process behind, and the next server clears the old warm homes and fills a new pool", async () => {
    const first = await rig.start();
    const before = await fullPool(first);
    expect(codexProcesses().length).toBeGreaterThanOrEqual(SIZE);
    expect(warmHomes()).toHaveLength(SIZE);

    first.serve.child.kill("SIGKILL");
    expect((await waitForExit(first.serve.child)).signal).toBe("SIGKILL");
    await pollUntil(() => Promise.resolve(codexProcesses()), (pids) => pids.length === 0, "the warm codex processes to exit with their server", 30_000);

    const second = await rig.start();
    const after = await fullPool(second);
    expect(after.sessions).toEqual([]);
    const old = new Set(before.warm.map((w) => w.warmSessionId));
    expect(after.warm.filter((w) => old.has(w.warmSessionId))).toEqual([]);
    expect(warmHomes().sort()).toEqual(after.warm.map((w) => `.warm-${w.warmSessionId.split(":").at(-1)!}`).sort());
  });
});
