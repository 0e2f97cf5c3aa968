import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";

/**
 * `loom threads switch ID [--to INSTANCE]` against a real `loom serve`: the
 * command reaches t3_thread_configure's switch now and prints its refusal
 * for a thread that waits on no usage limit (the move itself is tested
 * through the same tool in src/app/limits/failover.test.ts).
 */
let stateDir: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-switch-"));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
});

describe("loom threads switch", () => {
  it("refuses a thread that waits on no usage limit, and --to outside switch", { timeout: 120_000 }, async () => {
    const launched = await loom("threads", "launch", "--title", "idle", "--message", "hello", "--json");
    expect(launched.status, launched.stderr).toBe(0);
    const { threadId } = JSON.parse(launched.stdout) as { threadId: string };
    const refused = await loom("threads", "switch", threadId, "--to", "scripted");
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(`thread ${threadId} is not waiting on a usage limit`);
    const misplaced = await loom("threads", "stop", threadId, "--to", "scripted");
    expect(misplaced.status).not.toBe(0);
    expect(misplaced.stderr).toContain("--to goes with loom threads switch");
  });
});
