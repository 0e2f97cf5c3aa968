import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { connectToLoom } from "./client.js";

/** `loom budget raise` against a real `loom serve` with scripted agents (docs/budgets.md, "Pause and raise"). */
let stateDir: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-budget-"));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ waits: { maxWaitMs: 1_000 } }));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
});

describe("loom budget raise", () => {
  it("raises a root thread's budget and prints it; refuses a lowering with the server's typed error", { timeout: 60_000 }, async () => {
    const owner = await connectToLoom(stateDir);
    let threadId: string;
    try {
      threadId = (
        await owner.call<{ threadId: string }>("t3_thread_launch", {
          title: "Budgeted",
          message: JSON.stringify({ script: [{ say: "hi" }] }),
          target: { providerInstanceId: "scripted" },
          budget: { turns: 1, tokens: 5_000, onExceeded: "pause" },
        })
      ).threadId;
    } finally {
      await owner.close();
    }
    const raised = await loom("budget", "raise", "--thread", threadId, "--turns", "3");
    expect(raised.status, raised.stderr).toBe(0);
    expect(raised.stdout).toContain(`raised the budget of thread ${threadId}\nbudget:\n`);
    expect(raised.stdout).toMatch(/ {2}turns: \d of 3, \d left/);
    const json = await loom("budget", "raise", "--thread", threadId, "--tokens", "6000", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ holder: { kind: "thread", id: threadId }, limits: { turns: 3, tokens: 6_000, onExceeded: "pause" } });
    expect(await loom("budget", "raise", "--thread", threadId, "--turns", "2")).toMatchObject({ status: 1, stderr: expect.stringContaining("invalid_request:") });
    expect((await loom("budget", "raise", "--thread", threadId, "--turns", "2")).stderr).toContain("a raise cannot lower a limit");
  });

  it("exits 2 with a usage error for bad flags, before reaching the server", async () => {
    const cases: [string[], RegExp][] = [
      [["budget"], /loom budget needs a command: raise/],
      [["budget", "lower"], /unknown budget command "lower"/],
      [["budget", "raise", "--turns", "3"], /exactly one of --task, --thread, --workflow/],
      [["budget", "raise", "--task", "a", "--thread", "b", "--turns", "3"], /exactly one of --task, --thread, --workflow/],
      [["budget", "raise", "--task", "a"], /needs a limit to raise/],
      [["budget", "raise", "--task", "a", "--tokens", "1.5"], /--tokens must be a whole number/],
      [["budget", "raise", "--task", "a", "--cost-usd", "lots"], /--cost-usd must be a positive number/],
      [["budget", "raise", "--task", "a", "--on-exceeded", "sometimes"], /--on-exceeded must be one of stop, finish_turn, pause/],
    ];
    for (const [args, message] of cases) {
      const ran = await loom(...args);
      expect(ran.status, args.join(" ")).toBe(2);
      expect(ran.stderr).toMatch(message);
    }
  });
});
