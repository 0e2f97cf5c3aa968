import { join } from "node:path";
import { reconcileWorkspacesOnBoot, releaseLeftMergeLeases } from "../app/workspaces/boot.js";
import type { WorkspaceSettings } from "../app/workspaces/paths.js";
import { Orchestrator } from "../engine/orchestrator.js";
import type { OutboxWorker } from "../engine/outboxWorker.js";
import { instanceCrashPolicy, reconcileOnBoot } from "../engine/reconcile.js";
import { providerFacts } from "./providerWiring.js";
import type { ServerBackend } from "./serverBackend.js";
import type { ServerConfig } from "./serverConfig.js";
import type { StateDir } from "./stateDir.js";

/** The engine on the opened log, reconciled after the previous run of this node. */
export interface ServerEngine {
  readonly orchestrator: Orchestrator;
  /** Where Loom-managed worktrees go and how they are named (docs/workspaces.md). */
  readonly workspaces: WorkspaceSettings;
  /**
   * Wake this worker after each commit that wrote outbox rows: the
   * orchestrator's one in-process commit callback. Commits before it is set
   * (boot reconciliation) are found by the worker's first poll when it starts.
   */
  wakeOutbox(worker: OutboxWorker): void;
}

/**
 * Replay the log (from the latest snapshot), then reconcile what the last
 * run of this node left: worktrees a cut-short preparation made, and, on a
 * database no other node shares, runs and effects that died with the process
 * (on a shared one a lost node's work is taken over by NodeHeartbeats).
 */
export async function openEngine(dir: StateDir, setup: ServerConfig, base: ServerBackend): Promise<ServerEngine> {
  const { config, log } = setup;
  let worker: OutboxWorker | null = null;
  const orchestrator = await Orchestrator.open({
    store: base.backend.store,
    providers: providerFacts(setup.registry),
    limits: config.limits,
    turnCheckpoints: config.workspaces.checkpoints,
    // Only a commit that wrote outbox rows gives the worker work; retries and expired leases are its poll's.
    wakeOutbox: (wroteEffects) => {
      if (wroteEffects) worker?.kick();
    },
  });
  const workspaces: WorkspaceSettings = {
    worktreesRoot: config.workspaces.worktreesDir ?? join(dir.root, "worktrees"),
    branchPrefix: config.workspaces.branchPrefix,
    fallbackRoot: setup.cwd,
    setupRunDir: join(dir.root, "run", "setup"),
    ports: { start: config.workspaces.portRangeStart, blockSize: config.workspaces.portBlockSize },
  };
  // Before runs are reconciled: worktrees a cut-short preparation made are recorded on their thread first.
  const workspaceReport = await reconcileWorkspacesOnBoot({ orchestrator, workspaces, projects: config.projects }, base.bootId, log);
  if (workspaceReport.adopted + workspaceReport.removedHalfMade + workspaceReport.stoppedSetups > 0) {
    log(`loom: workspaces after restart: ${workspaceReport.adopted} worktree(s) recorded, ${workspaceReport.removedHalfMade} half-made removed, ${workspaceReport.stoppedSetups} setup or check command(s) stopped`);
  }
  if (!base.backend.shared) {
    await base.credentials.revokeAllThreadCredentials();
    const merges = await releaseLeftMergeLeases(base.backend.store, Date.now());
    if (merges > 0) log(`loom: ${merges} merge(s) cut short by the restart begin again`);
    const report = await reconcileOnBoot(orchestrator, base.backend.store, base.bootId, instanceCrashPolicy(config.providers));
    if (report.interruptedRuns + report.resumedRuns > 0 || report.lostEffects > 0) {
      log(`loom: reconciled after restart: ${report.resumedRuns} run(s) resumed, ${report.interruptedRuns} run(s) interrupted, ${report.lostEffects} effect(s) lost`);
    }
  }
  return {
    orchestrator,
    workspaces,
    wakeOutbox: (next) => {
      worker = next;
    },
  };
}
