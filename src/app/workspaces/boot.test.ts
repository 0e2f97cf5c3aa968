import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_PROVIDERS } from "../../core/testing/scenario.js";
import { Orchestrator } from "../../engine/orchestrator.js";
import { MemoryEventStore } from "../../store/memory/memoryEventStore.js";
import { gitSync, initRepo, tempDir } from "../../testkit/gitRepo.js";
import { createWorktree } from "../../workspaces/worktrees.js";
import { reconcileWorkspacesOnBoot } from "./boot.js";
import type { CaptureContext } from "./capture.js";
import { managedDirOf } from "./paths.js";

/**
 * Boot after a crash between `git worktree add` and recording it: the
 * worktree Loom made for a thread whose run is still preparing is recorded on
 * that thread, and one whose creation itself was cut short (a Loom branch,
 * no Loom metadata) is removed. Real git, the real orchestrator on a memory
 * store; no outbox worker runs, as after a crash before it could.
 */

let folder: ReturnType<typeof tempDir> | null = null;
afterEach(() => {
  folder?.remove();
  folder = null;
});

describe("reconcileWorkspacesOnBoot", () => {
  it("records a worktree made but not recorded before the crash, and removes a half-made one", async () => {
    folder = tempDir("ws-boot");
    const repo = join(folder.path, "repo");
    initRepo(repo, { "README.md": "hello\n" });
    const orchestrator = await Orchestrator.open({ store: new MemoryEventStore(), providers: (id) => TEST_PROVIDERS[id] ?? null });
    const ctx: CaptureContext = {
      orchestrator,
      projects: [{ id: "repo", root: repo, name: "repo" }],
      workspaces: { worktreesRoot: join(folder.path, "worktrees"), branchPrefix: "loom/", fallbackRoot: folder.path, setupRunDir: join(folder.path, "run") },
    };
    const threadId = "thread:crashed";
    for (const command of [
      {
        type: "thread.create" as const,
        commandId: "cmd:create",
        data: { threadId, projectId: "repo", modelSelection: { providerInstanceId: "steerable", model: "m1" }, workspace: { strategy: "worktree" as const, repoPath: repo } },
      },
      { type: "message.dispatch" as const, commandId: "cmd:send", data: { threadId, text: "hi", runId: "run:1" } },
    ]) {
      expect(await orchestrator.dispatch(command)).toMatchObject({ status: "accepted" });
    }
    expect(orchestrator.state.runs.get("run:1")).toMatchObject({ status: "starting", preparation: { status: "preparing", step: "worktree" } });

    // The crashed process had made the worktree (metadata written) but not recorded it yet.
    const managedDir = managedDirOf(ctx, "repo");
    const made = await createWorktree({ repoPath: repo, managedDir, threadId });
    // And another creation was cut short before Loom wrote its metadata.
    mkdirSync(managedDir, { recursive: true });
    gitSync(repo, "worktree", "add", "-q", "-b", "loom/half-made", join(managedDir, "half-made"));
    // A worktree of the user's own in the managed folder, on a branch outside Loom's prefix, is left alone.
    gitSync(repo, "worktree", "add", "-q", "-b", "mine", join(managedDir, "mine"));

    const report = await reconcileWorkspacesOnBoot(ctx, "boot-1");
    expect(report).toEqual({ stoppedSetups: 0, adopted: 1, removedHalfMade: 1 });
    expect(orchestrator.state.threads.get(threadId)).toMatchObject({ worktreePath: made.path, branch: made.branch });
    expect(orchestrator.state.runs.get("run:1")!.preparation).toMatchObject({ status: "preparing", step: "setup" });
    expect(existsSync(join(managedDir, "half-made"))).toBe(false);
    expect(existsSync(join(managedDir, "mine"))).toBe(true);

    // A second boot finds nothing more to do.
    expect(await reconcileWorkspacesOnBoot(ctx, "boot-2")).toEqual({ stoppedSetups: 0, adopted: 0, removedHalfMade: 0 });
  });
});
