import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RESTART_PREPARATION_NOTICE } from "../../engine/reconcile.js";
import { gitSync, initRepo, tempDir } from "../../testkit/gitRepo.js";
import { processAlive, waitForExit } from "../../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import { pollUntil } from "../../testkit/poll.js";

/**
 * kill -9 the built `loom serve` while a worktree thread's setup command runs,
 * restart on the same state dir: the setup its predecessor left running is
 * stopped, the run is ended (never left preparing), the worktree stays
 * recorded on its thread (nothing half-made and unknown), and
 * prepared-run.retry finishes the preparation in the same worktree.
 */

interface ReadResult {
  thread: { worktreePath: string | null; branch: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text?: string }[];
}

let folder: ReturnType<typeof tempDir>;
let stateDir: string;
let pidFile: string;
let rig: ServeRig;

beforeEach(() => {
  folder = tempDir("ws-restart");
  const repo = join(folder.path, "repo");
  initRepo(repo, { "README.md": "hello\n" });
  stateDir = join(folder.path, "state");
  rig = new ServeRig(stateDir, "prepared-crash-test");
  pidFile = join(folder.path, "setup.pid");
  const setup = `echo $$ > '${pidFile}'; echo waiting; while [ ! -f go ]; do sleep 0.05; done; echo done`;
  writeFileSync(join(folder.path, "config.json"), JSON.stringify({ projects: [{ id: "repo", root: repo, setup }] }));
});
afterEach(async () => {
  await rig.close();
  folder.remove();
});

function serve(): Promise<ServedLoom> {
  return rig.start({ args: ["--config", join(folder.path, "config.json")] });
}

function readUntil(client: LoomMcpClient, threadId: string, done: (result: ReadResult) => boolean): Promise<ReadResult> {
  return pollUntil(() => client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" }), done, `thread ${threadId}`, 15_000);
}

async function untilTrue(probe: () => boolean, what: string): Promise<void> {
  await pollUntil(probe, (held) => held, what, 15_000);
}

describe("restart in the middle of a prepared run", () => {
  it("stops the orphaned setup, ends the run, keeps the worktree recorded, and a retry prepares it again", async () => {
    const first = await serve();
    const launched = await first.client.ok<{ threadId: string; runId: string; worktreePath: string }>("t3_thread_launch", {
      projectId: "repo",
      workspaceStrategy: "worktree",
      message: "hello after the restart",
    });
    const { threadId, runId, worktreePath } = launched;
    expect(worktreePath).not.toBeNull();
    await untilTrue(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", "the setup to start");
    const setupPid = Number(readFileSync(pidFile, "utf8").trim());
    // The server notes the setup's process group when the spawn returns; the shell may write its pid first.
    const notes = join(stateDir, "run", "setup");
    await untilTrue(() => existsSync(notes) && readdirSync(notes).some((name) => name.endsWith(".json")), "the server to note the running setup");
    expect(processAlive(setupPid)).toBe(true);

    first.serve.child.kill("SIGKILL");
    await waitForExit(first.serve.child);
    // The setup runs in its own process group, so it outlives the killed server.
    expect(processAlive(setupPid)).toBe(true);

    const second = await serve();
    expect(second.serve.stderr()).toContain("1 setup or check command(s) stopped");
    await untilTrue(() => !processAlive(setupPid), "the orphaned setup to be stopped");
    const lost = await second.client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" });
    expect(lost.runs[0]).toMatchObject({ runId, status: "interrupted", endReason: "server_restarted" });
    expect(lost.items.find((item) => item.type === "system_notice" && item.runId === runId)?.text).toBe(RESTART_PREPARATION_NOTICE);
    expect(lost.items.some((item) => item.type === "assistant_message")).toBe(false);
    expect(lost.thread.worktreePath).toBe(worktreePath);
    const repo = join(folder.path, "repo");
    expect(gitSync(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${worktreePath}`);

    writeFileSync(join(worktreePath, "go"), "");
    const retried = await fetch(`${second.serve.url}/api/orchestration/dispatch`, {
      method: "POST",
      headers: { authorization: `Bearer ${second.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "prepared-run.retry", commandId: "cmd:test:retry", data: { threadId, runId, newRunId: "run:after-restart" } }),
    });
    expect(retried.status).toBe(200);
    const done = await readUntil(second.client, threadId, (r) => r.runs.some((run) => run.runId === "run:after-restart" && run.status === "completed"));
    expect(done.items.some((item) => item.type === "assistant_message" && item.runId === "run:after-restart")).toBe(true);
    expect(done.thread.worktreePath).toBe(worktreePath);
    expect(gitSync(repo, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree ")).length).toBe(2);
  });
});
