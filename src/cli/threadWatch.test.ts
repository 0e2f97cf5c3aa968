import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type LoomServer, startLoomServer } from "../server/loomServer.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { CLI_PATH, waitForExit } from "../testkit/loomProcess.js";
import { pollUntil } from "../testkit/poll.js";
import { cliEnv, runLoom } from "../testkit/cliRun.js";

/**
 * `loom threads watch` as a person runs it: the built CLI spawned against the
 * real server (in this process, so the test can restart it on the same port)
 * with the scripted agent. It shows history, then items, streamed text,
 * command output and run status live; survives a server restart by resuming
 * from the log (nothing repeated); exits 0 on SIGINT.
 */

const loom = runLoom;

/** `loom threads watch` in the background, its output readable while it runs. */
function spawnWatch(args: readonly string[]) {
  const child = spawn(process.execPath, [CLI_PATH, "threads", "watch", ...args], { env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = waitForExit(child);
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    /** Wait until stdout holds `text`. */
    shows: (text: string, timeoutMs = 20_000) => pollUntil(() => stdout, (out) => out.includes(text), `the watch to show ${JSON.stringify(text)} (stderr: ${stderr})`, timeoutMs),
  };
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

describe("loom threads watch", () => {
  it("tails a thread live, resumes across a server restart without repeating anything, and exits 0 on Ctrl-C", async () => {
    const h = await LoomHarness.start();
    const stateDir = join(h.dir, ".loom");
    const port = Number(new URL(h.server.url).port);
    let server: LoomServer = h.server;
    let watch: ReturnType<typeof spawnWatch> | null = null;
    cleanup = async () => {
      if (watch !== null && watch.child.exitCode === null) watch.child.kill("SIGKILL");
      await server.close();
      rmSync(h.dir, { recursive: true, force: true });
    };
    const created = await h.createThread({ prompt: "an earlier question", title: "watched" });
    await h.waitForEnd(created.runId!);
    const threadId = created.threadId;

    // A unique prefix names the thread, as everywhere in the CLI.
    watch = spawnWatch([threadId.slice(0, threadId.length - 4), "--state-dir", stateDir]);
    await watch.shows(`thread ${threadId} "watched"`);
    await watch.shows("user: an earlier question");
    await watch.shows("assistant: Echo: an earlier question");

    const sent = await loom([
      "threads",
      "send",
      threadId,
      script({ say: "words that stream one by one", stream: true }, { run: "printf 'line one\\n'; sleep 0.2; printf 'line two\\n'" }, { say: "all done" }),
      "--state-dir",
      stateDir,
      "--json",
    ]);
    expect(sent.status, sent.stderr).toBe(0);
    const runId = (JSON.parse(sent.stdout) as { runId: string }).runId;
    await watch.shows(`-- run ${runId} completed`);
    await watch.shows("assistant: words that stream one by one\n");
    await watch.shows("  │ line one\n  │ line two\n");
    await watch.shows("(completed) exit 0\n");
    await watch.shows("assistant: all done\n");

    // The server restarts on the same port: the watch reconnects and resumes from the log.
    await h.owner.close();
    await server.close();
    await pollUntil(() => watch.stderr(), (err) => err.includes("connection lost, reconnecting"), "the watch to notice the restart");
    server = await startLoomServer({ stateDir, cwd: h.dir, configPath: join(h.dir, "loom-config.json"), port });
    await pollUntil(() => watch.stderr(), (err) => err.includes("reconnected"), "the watch to reconnect");
    await watch.shows("-- resumed after sequence");
    const again = await loom(["threads", "send", threadId, "after the restart", "--wait", "--state-dir", stateDir]);
    expect(again.status, again.stderr).toBe(0);
    await watch.shows("assistant: Echo: after the restart\n");

    // Everything shown once: the resume replayed nothing already seen.
    const shown = watch.stdout();
    expect(count(shown, "assistant: words that stream one by one")).toBe(1);
    expect(count(shown, "  │ line one")).toBe(1);
    expect(count(shown, "assistant: all done")).toBe(1);
    expect(count(shown, "user: after the restart")).toBe(1);
    expect(count(shown, `-- run ${runId} completed`)).toBe(1);

    watch.child.kill("SIGINT");
    expect(await watch.exit).toEqual({ code: 0, signal: null });
    expect(watch.stderr()).not.toContain("Error");
  });

  it("prints every wire update as a JSON line with --json, and fails cleanly for an unknown thread or bad arguments", async () => {
    const h = await LoomHarness.start();
    const stateDir = join(h.dir, ".loom");
    let watch: ReturnType<typeof spawnWatch> | null = null;
    cleanup = async () => {
      if (watch !== null && watch.child.exitCode === null) watch.child.kill("SIGKILL");
      await h.close();
    };
    const created = await h.createThread({ title: "json" });
    watch = spawnWatch([created.threadId, "--json", "--last", "5", "--state-dir", stateDir]);
    await watch.shows('"kind":"snapshot"');
    await h.owner.ok("t3_thread_send", { threadId: created.threadId, message: script({ run: "printf 'out\\n'" }) });
    await watch.shows('"kind":"commandOutput"');
    type Line = { kind: string; update?: { text: string }; event?: { sequence: number } };
    const parse = (out: string): Line[] => out.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line);
    const outputOf = (lines: Line[]): string => lines.filter((line) => line.kind === "commandOutput").map((line) => line.update!.text).join("");
    const completed = await pollUntil(
      () => watch.stdout(),
      (out) => out.includes('"type":"command_execution"') && out.includes('"status":"completed"') && outputOf(parse(out)) === "out\n",
      "the completed command item and its output",
    );
    const lines = parse(completed);
    expect(lines[0]!.kind).toBe("snapshot");
    const sequences = lines.filter((line) => line.kind === "event").map((line) => line.event!.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    watch.child.kill("SIGTERM");
    expect((await watch.exit).code).toBe(0);

    const missing = await loom(["threads", "watch", "thread:nope", "--state-dir", stateDir]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("thread_not_found");
    const usage = await loom(["threads", "watch", "--state-dir", stateDir]);
    expect(usage.status).toBe(2);
    const badLast = await loom(["threads", "watch", created.threadId, "--last", "0", "--state-dir", stateDir]);
    expect(badLast.status).toBe(2);
  });
});
