import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { type Ran, cliEnv, runLoom } from "../testkit/cliRun.js";
import { pollUntil } from "../testkit/poll.js";

/**
 * `loom sessions list|release` and the server's log file, against a real
 * `loom serve` (run with --log-level debug) with scripted agents: stdout,
 * stderr and exit codes; the log records which sessions the server opens,
 * holds and releases, and never a token.
 */
let stateDir: string;
let projectRoot: string;
let serve: ServeProcess;

function loom(...args: string[]): Promise<Ran> {
  return runLoom([...args, "--state-dir", stateDir]);
}

function json<T>(ran: Ran): T {
  expect(ran.status, ran.stderr).toBe(0);
  return JSON.parse(ran.stdout) as T;
}


const script = (...steps: unknown[]): string => JSON.stringify({ script: steps });

interface Listed {
  sessions: { providerSessionId: string; threadId: string; threadTitle: string; providerInstanceId: string; driver: string; heldHere: boolean; idleMs: number | null; activeRunId: string | null; queuedRuns: number }[];
}

const logText = (): string => readFileSync(join(stateDir, "logs", "loom.log"), "utf8");

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-cli-sessions-"));
  projectRoot = mkdtempSync(join(tmpdir(), "loom-cli-sessions-project-"));
  // Idle sessions stay for the test's length; releasing is the command's job here.
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "demo", root: projectRoot }], sessions: { idleMs: 600_000 }, log: { level: "warn" } }));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0", "--log-level", "debug"], cliEnv());
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(projectRoot, { recursive: true, force: true });
});

describe("loom sessions", () => {
  it("lists the held sessions, releases one by its thread's id prefix, and logs what it holds", { timeout: 120_000 }, async () => {
    expect(await loom("sessions", "list")).toEqual({ status: 0, stdout: "no open sessions\n", stderr: "" });

    const idle = json<{ threadId: string; status: string }>(await loom("threads", "launch", "--message", "hello", "--title", "Idle one", "--wait", "--json"));
    expect(idle.status).toBe("completed");
    const asking = json<{ threadId: string; runId: string }>(await loom("threads", "launch", "--message", script({ ask: "which?" }, { say: "got {{answer}}" }), "--title", "Asking", "--json"));
    const listed = await pollUntil(
      async () => json<Listed>(await loom("sessions", "list", "--json")),
      (l) => l.sessions.length === 2 && l.sessions.some((s) => s.activeRunId !== null),
      "two sessions, one of them with its run waiting",
      30_000,
    );
    const idleSession = listed.sessions.find((s) => s.threadId === idle.threadId)!;
    const busySession = listed.sessions.find((s) => s.threadId === asking.threadId)!;
    expect(idleSession).toMatchObject({ threadTitle: "Idle one", providerInstanceId: "scripted", driver: "scripted", heldHere: true, activeRunId: null, queuedRuns: 0 });
    expect(idleSession.idleMs).toBeGreaterThanOrEqual(0);
    expect(busySession).toMatchObject({ threadTitle: "Asking", activeRunId: asking.runId });

    const text = await loom("sessions", "list");
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(`${idleSession.providerSessionId}\n  thread: ${idle.threadId} "Idle one"\n  scripted (scripted), since `);
    expect(text.stdout).toMatch(new RegExp(`: idle \\d+ s\\n`));
    expect(text.stdout).toContain(`: running ${asking.runId}\n`);

    // Release the idle one by a prefix of its thread's id (without "thread:").
    const prefix = idle.threadId.slice("thread:".length, "thread:".length + 8);
    const released = await loom("sessions", "release", prefix);
    expect(released).toEqual({ status: 0, stdout: `released ${idleSession.providerSessionId} of ${idle.threadId}\n`, stderr: "" });
    // Releasing the busy one interrupts its run.
    const interrupted = json<{ providerSessionId: string; interruptedRunId: string | null }>(await loom("sessions", "release", busySession.providerSessionId, "--json"));
    expect(interrupted).toEqual({ providerSessionId: busySession.providerSessionId, threadId: asking.threadId, interruptedRunId: asking.runId });
    expect(json<Listed>(await loom("sessions", "list", "--json")).sessions).toEqual([]);

    // The released thread takes new work on a new session.
    const again = json<{ wait: { status: string } }>(await loom("threads", "send", idle.threadId, "again", "--wait", "--json"));
    expect(again.wait.status).toBe("completed");

    // Unknown and bad input.
    expect(await loom("sessions", "release", "zzzz-none")).toEqual({ status: 1, stdout: "", stderr: "invalid_request: session zzzz-none does not exist\n" });
    const usage = await loom("sessions", "release");
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("loom sessions release takes ID");
    expect((await loom("sessions", "frobnicate")).status).toBe(2);

    // The log (level debug from the flag, over the config's warn) names every session opened and released.
    const log = await pollUntil(logText, (t) => (t.match(/INFO sessions: opened /g) ?? []).length >= 3, "the log to record the new session", 30_000);
    expect(log).toMatch(/INFO loom \S+ listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(log).toContain(`INFO sessions: opened ${idleSession.providerSessionId} for ${idle.threadId} on scripted (scripted)`);
    expect(log).toContain(`INFO sessions: released ${idleSession.providerSessionId} of ${idle.threadId} (detached)`);
    expect(log).toContain(`INFO sessions: released ${busySession.providerSessionId} of ${asking.threadId} (detached)`);
    const ownerToken = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    expect(log).not.toContain(ownerToken);
  });

  it("refuses an unknown log level as a usage error", async () => {
    const ran = await runLoom(["serve", "--state-dir", stateDir, "--log-level", "loud"]);
    expect(ran.status).toBe(2);
    expect(ran.stderr).toContain(`--log-level must be one of error, warn, info, debug, got "loud"`);
  });
});
