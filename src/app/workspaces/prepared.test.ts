import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { gitSync } from "../../testkit/gitRepo.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import { type RepoHarness, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Prepared runs on a real repository through the real server: the project's
 * setup command runs in the new worktree before the agent starts, its output
 * is streamed into a command item while it runs, a failed setup fails the run
 * without ever starting the agent, and prepared-run.retry prepares again in
 * the same worktree.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

interface Launched {
  threadId: string;
  runId: string;
  worktreePath: string | null;
}

function setupItem(h: LoomHarness, threadId: string, runId: string): TurnItemOf<"command_execution"> | undefined {
  return h.items(threadId).find((item): item is TurnItemOf<"command_execution"> => item.type === "command_execution" && item.runId === runId);
}

function attemptsOf(h: LoomHarness, runId: string): number {
  return h.state.runAttempts.get(runId)?.length ?? 0;
}

describe("prepared runs: the project's setup command", () => {
  it("streams the setup's output while it runs, holds the agent until it succeeds, then starts the turn in the worktree", async () => {
    // The setup prints a line, then waits for the test to let it finish.
    env = await startRepoHarness({ setup: "echo installing; echo ran > .setup-ran; while [ ! -f go ]; do sleep 0.05; done; echo installed" });
    const { h } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "hello after setup" });
    const worktree = launched.worktreePath!;
    expect(worktree).not.toBeNull();

    const streamed = await h.until(() => {
      const item = setupItem(h, launched.threadId, launched.runId);
      return item?.outputPreview.includes("installing") === true ? item : undefined;
    }, "the setup's first output line in its command item");
    expect(streamed).toMatchObject({ status: "in_progress", command: expect.stringContaining("echo installing") as string, cwd: worktree });
    const preparing = h.run(launched.runId);
    expect(preparing.status).toBe("starting");
    expect(preparing.preparation).toMatchObject({ kind: "workspace", status: "preparing", step: "setup" });
    expect(attemptsOf(h, launched.runId)).toBe(0);
    expect(h.state.threads.get(launched.threadId)?.workspace?.status).toBe("pending");

    writeFileSync(join(worktree, "go"), "");
    const ended = await h.waitForEnd(launched.runId);
    expect(ended.status).toBe("completed");
    expect(ended.preparation).toMatchObject({ status: "ready" });
    const done = setupItem(h, launched.threadId, launched.runId)!;
    expect(done).toMatchObject({ status: "completed", exitCode: 0 });
    expect(done.outputPreview).toBe("installing\ninstalled\n");
    // The setup item comes before anything the agent said, and the agent ran after it.
    const texts = h.assistantTexts(launched.threadId, launched.runId);
    expect(texts.length).toBeGreaterThan(0);
    const setupPosition = done.position;
    const firstReply = h.items(launched.threadId).find((item) => item.type === "assistant_message")!;
    expect(firstReply.position).toBeGreaterThan(setupPosition);
    expect(readFileSync(join(worktree, ".setup-ran"), "utf8")).toBe("ran\n");
    expect(h.state.threads.get(launched.threadId)?.workspace?.status).toBe("ready");
  });

  it("fails the run when the setup fails, never starting the agent; a retry prepares again in the same worktree", async () => {
    env = await startRepoHarness({ setup: "test -f ok || { echo 'ok is missing' >&2; exit 3; }; echo fine" });
    const { h, repo } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "hello after retry" });
    const failed = await h.waitForEnd(launched.runId);
    expect(failed).toMatchObject({ status: "failed", endReason: "preparation_failed", failure: { code: "setup_failed", message: "the setup command exited with 3" } });
    expect(failed.preparation).toMatchObject({ status: "failed", step: "setup" });
    expect(attemptsOf(h, launched.runId)).toBe(0);
    expect(h.assistantTexts(launched.threadId)).toEqual([]);
    expect(setupItem(h, launched.threadId, launched.runId)).toMatchObject({ status: "failed", exitCode: 3, outputPreview: "ok is missing\n" });
    expect(h.items(launched.threadId).find((item) => item.type === "error")).toMatchObject({ code: "setup_failed" });
    const worktree = h.state.threads.get(launched.threadId)!.worktreePath!;
    expect(worktree).toBe(launched.worktreePath);
    expect(existsSync(worktree)).toBe(true);

    // A run that did not fail in its preparation cannot be retried; an unknown one is not found.
    expect((await h.dispatch("prepared-run.retry", { threadId: launched.threadId, runId: "run:nope" })).body).toMatchObject({ rejection: { code: "run_not_found" } });

    writeFileSync(join(worktree, "ok"), "");
    const retried = await h.dispatch("prepared-run.retry", { threadId: launched.threadId, runId: launched.runId, newRunId: "run:retry-1" });
    expect(retried.status).toBe(200);
    const second = await h.waitForEnd("run:retry-1");
    expect(second).toMatchObject({ status: "completed", kind: failed.kind, messageId: failed.messageId });
    expect(setupItem(h, launched.threadId, "run:retry-1")).toMatchObject({ status: "completed", exitCode: 0, outputPreview: "fine\n" });
    expect(h.assistantTexts(launched.threadId, "run:retry-1").length).toBeGreaterThan(0);
    // Still the one worktree: the retry did not make a second.
    expect(h.state.threads.get(launched.threadId)!.worktreePath).toBe(worktree);
    expect(gitSync(repo, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree ")).length).toBe(2);
    const again = await h.dispatch("prepared-run.retry", { threadId: launched.threadId, runId: "run:retry-1" });
    expect(again.body).toMatchObject({ rejection: { code: "run_not_retryable" } });
  });

  it("stops the setup when the preparing run is interrupted; the run ends before its agent ever started", async () => {
    env = await startRepoHarness({ setup: "echo $$ > setup.pid; while [ ! -f go ]; do sleep 0.05; done" });
    const { h } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "never runs" });
    const pidFile = join(launched.worktreePath!, "setup.pid");
    const pid = await h.until(() => (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "" ? Number(readFileSync(pidFile, "utf8")) : undefined), "the setup to start");
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    const interrupted = await h.owner.ok<{ outcome: string }>("t3_thread_interrupt", { threadId: launched.threadId });
    expect(interrupted.outcome).toBe("interrupt_requested");
    const ended = await h.waitForEnd(launched.runId);
    expect(ended.status).toBe("interrupted");
    expect(ended.preparation).toMatchObject({ status: "failed", step: "setup" });
    expect(setupItem(h, launched.threadId, launched.runId)).toMatchObject({ status: "failed" });
    await h.until(() => !alive(), "the setup's process group to be stopped");
    expect(attemptsOf(h, launched.runId)).toBe(0);
    expect(h.assistantTexts(launched.threadId)).toEqual([]);
  });

  it("deleting the thread during its setup stops the setup and removes the worktree", async () => {
    env = await startRepoHarness({ setup: "echo $$ > setup.pid; while [ ! -f go ]; do sleep 0.05; done" });
    const { h, repo } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "never runs" });
    const worktree = launched.worktreePath!;
    const pidFile = join(worktree, "setup.pid");
    const pid = await h.until(() => (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "" ? Number(readFileSync(pidFile, "utf8")) : undefined), "the setup to start");
    expect((await h.dispatch("thread.delete", { threadId: launched.threadId })).status).toBe(200);
    expect(h.run(launched.runId)).toMatchObject({ status: "interrupted", endReason: "thread_deleted" });
    await h.until(() => !existsSync(worktree), "the deleted thread's worktree to be removed");
    expect(() => process.kill(pid, 0)).toThrow();
    expect(gitSync(repo, "worktree", "list", "--porcelain")).not.toContain(worktree);
    expect(attemptsOf(h, launched.runId)).toBe(0);
  });
});
