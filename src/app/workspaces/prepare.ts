import type { Command } from "../../contracts/commands.js";
import { MAX_SETUP_OUTPUT, type SetupReport } from "../../contracts/commands/workspaceCommands.js";
import type { EffectContext } from "../../engine/outboxWorker.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import { joinId } from "../../core/ids.js";
import { DEFAULT_SETUP_TIMEOUT_MS } from "../../config/config.js";
import { isWorkspaceError } from "../../workspaces/errors.js";
import { SetupOutcome, runSetup } from "../../workspaces/setupRunner.js";
import { type CreatedWorktree, createWorktree, removeWorktree } from "../../workspaces/worktrees.js";
import { listManagedWorktrees } from "../../workspaces/worktreeList.js";
import type { CaptureContext } from "./capture.js";
import { worktreeEnvironment } from "./isolation.js";
import { managedDirOf, projectOf } from "./paths.js";
import { forgetSetup, noteSetup } from "./setupNotes.js";

/**
 * workspace.prepare: the prepared run of a worktree thread. It creates the
 * worktree (from the thread's base ref, or from the parent's checkpoint for a
 * worktree child) and records it on the thread at once, then runs the
 * project's setup command with its output reported as progress, and finally
 * releases the run to its provider or fails it. A failed setup never starts
 * the agent. A worktree already made for the thread (a restart, a retry) is
 * used instead of a second one. When the run stops preparing meanwhile (an
 * interrupt, a deletion) the setup is stopped and nothing more is reported.
 */

/** Setup output is reported at most this often; the release or failure carries the rest. */
export const SETUP_PROGRESS_MS = 1_000;

export async function prepareWorkspace(ctx: CaptureContext, payload: { threadId: string; runId: string }, effect: EffectContext): Promise<void> {
  const state = ctx.orchestrator.state;
  const run = state.runs.get(payload.runId);
  const thread = state.threads.get(payload.threadId);
  if (run === undefined || thread === undefined || !stillPreparing(run) || thread.workspace === undefined || thread.workspace === null) return;
  const watch = watchRun(ctx, run.id);
  const command = (suffix: string) => joinId("cmd", "prepare", effect.effectId, suffix);
  try {
    let worktreePath = thread.worktreePath;
    if (worktreePath === null) {
      const made = await makeWorktree(ctx, thread);
      const recorded = await dispatch(ctx, {
        type: "prepared-run.progress",
        commandId: command("worktree"),
        data: { threadId: thread.id, runId: run.id, step: "worktree", worktree: { path: made.path, branch: made.branch, baseCommit: made.baseCommit } },
      });
      if (!recorded) {
        // The run stopped preparing (or the thread was deleted) meanwhile: never leave a worktree nobody records.
        await discardUnrecorded(ctx, thread, made);
        return;
      }
      worktreePath = made.path;
    }
    if (watch.signal.aborted) return;
    // The recorded thread carries its port block; a block past the last port fails the run here, before any setup.
    const isolation = worktreeEnvironment(ctx.workspaces, ctx.orchestrator.state.threads.get(thread.id) ?? thread);
    const setup = projectOf(ctx, thread.projectId)?.setup;
    if (setup === undefined) {
      await dispatch(ctx, { type: "prepared-run.release", commandId: command("release"), data: { threadId: thread.id, runId: run.id } });
      return;
    }
    await runProjectSetup(ctx, thread, run, { cwd: worktreePath, isolation }, setup, watch.signal, command);
  } catch (error) {
    if (watch.signal.aborted) return;
    const files = isWorkspaceError(error) ? [...error.files] : [];
    await dispatch(ctx, {
      type: "prepared-run.fail",
      commandId: command("fail"),
      data: {
        threadId: thread.id,
        runId: run.id,
        code: isWorkspaceError(error) ? error.code : "workspace_prepare_failed",
        message: `preparing the worktree failed: ${error instanceof Error ? error.message : String(error)}`,
        ...(files.length > 0 ? { files } : {}),
      },
    });
  } finally {
    watch.close();
  }
}

async function makeWorktree(ctx: CaptureContext, thread: AppThread): Promise<CreatedWorktree> {
  const workspace = thread.workspace!;
  const managedDir = managedDirOf(ctx, thread.projectId);
  const existing = (await listManagedWorktrees(workspace.repoPath, managedDir)).find((worktree) => worktree.threadId === thread.id && !worktree.prunable);
  if (existing !== undefined && existing.branch !== null && existing.head !== null) {
    return { threadId: thread.id, path: existing.path, branch: existing.branch.replace(/^refs\/heads\//, ""), baseCommit: existing.head, baseRef: existing.branch };
  }
  let baseRef = workspace.baseRef ?? undefined;
  if (workspace.baseCheckpointId !== null) {
    const base = ctx.orchestrator.state.checkpoints.get(workspace.baseCheckpointId);
    if (base?.status !== "ready") throw new Error(`the parent's checkpoint ${workspace.baseCheckpointId} is ${base?.status ?? "not recorded"}; there is no state to branch from`);
    baseRef = base.commit ?? base.ref;
  }
  return createWorktree({
    repoPath: workspace.repoPath,
    managedDir,
    threadId: thread.id,
    ...(baseRef === undefined ? {} : { baseRef }),
    startFromOrigin: workspace.startFromOrigin,
    branchPrefix: ctx.workspaces.branchPrefix,
    title: thread.title,
  });
}

async function discardUnrecorded(ctx: CaptureContext, thread: AppThread, made: CreatedWorktree): Promise<void> {
  const now = ctx.orchestrator.state.threads.get(thread.id);
  if (now?.worktreePath === made.path) return;
  await removeWorktree({ repoPath: thread.workspace!.repoPath, managedDir: managedDirOf(ctx, thread.projectId), worktreePath: made.path, force: true }).catch(() => undefined);
}

async function runProjectSetup(
  ctx: CaptureContext,
  thread: AppThread,
  run: Run,
  where: { readonly cwd: string; readonly isolation: Readonly<Record<string, string>> },
  setup: string,
  signal: AbortSignal,
  command: (suffix: string) => string,
): Promise<void> {
  const project = projectOf(ctx, thread.projectId);
  const { cwd } = where;
  let output = "";
  let dropped = false;
  let reported = -1;
  let progress = 0;
  let sending: Promise<unknown> = Promise.resolve();
  const report = (extra: Partial<SetupReport> = {}): SetupReport => ({ command: setup, cwd, output, outputTruncated: dropped, ...extra });
  const sendProgress = () => {
    if (output.length === reported || signal.aborted) return;
    reported = output.length;
    progress += 1;
    const data = { threadId: thread.id, runId: run.id, step: "setup" as const, setup: report() };
    sending = sending.then(() => dispatch(ctx, { type: "prepared-run.progress", commandId: command(`setup:${progress}`), data })).catch(() => undefined);
  };
  const timer = setInterval(sendProgress, SETUP_PROGRESS_MS);
  timer.unref();
  sendProgress(); // the command item appears as the setup starts
  try {
    const result = await runSetup({
      cwd,
      command: { shell: setup },
      env: { ...where.isolation, LOOM_THREAD_ID: thread.id, LOOM_WORKTREE_PATH: cwd, LOOM_PROJECT_ROOT: project?.root ?? cwd },
      signal,
      timeoutMs: project?.setupTimeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS,
      onSpawn: (pid) => noteSetup(ctx.workspaces.setupRunDir, run.id, { pid, cwd }),
      onOutput: (chunk) => {
        output += chunk.text;
        if (output.length > MAX_SETUP_OUTPUT) {
          output = output.slice(output.length - MAX_SETUP_OUTPUT);
          dropped = true;
        }
      },
    });
    clearInterval(timer);
    await sending;
    if (result.outcome === SetupOutcome.aborted) return;
    const final = report({ exitCode: result.exitCode, durationMs: Math.round(result.durationMs) });
    if (result.outcome === SetupOutcome.succeeded) {
      await dispatch(ctx, { type: "prepared-run.release", commandId: command("release"), data: { threadId: thread.id, runId: run.id, setup: final } });
      return;
    }
    const why = result.outcome === SetupOutcome.timedOut ? `timed out after ${project?.setupTimeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS} ms` : `exited with ${result.exitCode ?? result.signal ?? "?"}`;
    await dispatch(ctx, {
      type: "prepared-run.fail",
      commandId: command("fail"),
      data: { threadId: thread.id, runId: run.id, code: result.outcome === SetupOutcome.timedOut ? "setup_timed_out" : "setup_failed", message: `the setup command ${why}`, setup: final },
    });
  } finally {
    clearInterval(timer);
    forgetSetup(ctx.workspaces.setupRunDir, run.id);
  }
}

function stillPreparing(run: Run | undefined): boolean {
  return run !== undefined && run.status === "starting" && run.preparation?.status === "preparing" && run.interruptRequestedAt === null;
}

/** An abort signal that fires when the run stops preparing or an interrupt reaches it. */
function watchRun(ctx: CaptureContext, runId: string): { readonly signal: AbortSignal; close(): void } {
  const controller = new AbortController();
  const check = () => {
    if (!stillPreparing(ctx.orchestrator.state.runs.get(runId))) controller.abort();
  };
  const subscription = ctx.orchestrator.follow(ctx.orchestrator.state.lastSequence, check);
  check();
  return { signal: controller.signal, close: () => subscription.close() };
}

/** Dispatch a report; false when it was refused (the run is no longer preparing). */
async function dispatch(ctx: CaptureContext, command: Command): Promise<boolean> {
  const receipt = await ctx.orchestrator.dispatch(command);
  return receipt.status === "accepted";
}
