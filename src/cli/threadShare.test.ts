import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";

/** `loom threads share ID [--close]` against a real `loom serve`: the link, the same link again, and closing it. */
let stateDir: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-share-"));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
});

describe("loom threads share", () => {
  it("prints a guest link, the same one while it is open, and closes it", { timeout: 120_000 }, async () => {
    const launched = await loom("threads", "launch", "--title", "shared", "--message", "hello", "--json");
    expect(launched.status, launched.stderr).toBe(0);
    const { threadId } = JSON.parse(launched.stdout) as { threadId: string };
    const first = await loom("threads", "share", threadId, "--json");
    expect(first.status, first.stderr).toBe(0);
    const link = JSON.parse(first.stdout) as { url: string; expiresAt: string };
    expect(link.url).toMatch(/^http:\/\/[^/]+\/g\/[\w-]{22}\.[\w-]{22}$/);
    const again = await loom("threads", "share", threadId.slice(0, 16));
    expect(again.stdout.split("\n")[0]).toBe(link.url);
    expect((await fetch(`${link.url}/view`)).status).toBe(404);
    const closed = await loom("threads", "share", threadId, "--close");
    expect(closed.stdout).toBe(`${threadId}: guest share closed\n`);
    const twice = await loom("threads", "share", threadId, "--close");
    expect(twice.status).not.toBe(0);
    expect(twice.stderr).toContain("no open guest share");
    expect((await loom("threads", "archive", threadId, "--close")).stderr).toContain("--close goes with loom threads share");
  });
});
