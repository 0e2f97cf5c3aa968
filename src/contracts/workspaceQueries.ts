import { z } from "zod";
import { CheckpointFileSchema, CheckpointSchema } from "./entities/checkpoints.js";

/**
 * Inputs and outputs of the workspace app functions (src/app/workspaces/):
 * turn and thread diffs, the threads sharing a worktree, Loom-managed
 * worktrees and merging a child into its parent. The HTTP API and the
 * WebSocket RPC (orchestration.getTurnDiff, getFullThreadDiff,
 * getWorktreeThreadIds) serve the same shapes.
 */

const ThreadId = z.string().min(1).max(512);
/** Largest patch a diff answers with; the default is 1 MiB. */
export const MAX_DIFF_BYTES = 16 * 1024 * 1024;
const MaxBytes = z.number().int().min(1).max(MAX_DIFF_BYTES).describe("Cap on the patch text; the patch is cut between files and ends with a truncation marker");

export const TurnDiffInput = z
  .object({
    threadId: ThreadId,
    runId: z.string().min(1).max(512).optional().describe("Default: the thread's latest run with a checkpoint"),
    maxBytes: MaxBytes.optional(),
  })
  .strict();
export type TurnDiffInput = z.infer<typeof TurnDiffInput>;

export const FullThreadDiffInput = z.object({ threadId: ThreadId, maxBytes: MaxBytes.optional() }).strict();
export type FullThreadDiffInput = z.infer<typeof FullThreadDiffInput>;

export const ThreadDiffOutput = z.object({
  threadId: z.string(),
  /** The turn's run (a turn diff), or null (the full-thread diff). */
  runId: z.string().nullable(),
  fromCheckpointId: z.string(),
  /** Null: the diff ends at the working tree as it is now (the turn is still running, or the whole thread). */
  toCheckpointId: z.string().nullable(),
  fromCommit: z.string(),
  toCommit: z.string().nullable(),
  /** Every changed file with its stats, including files left out of the patch. */
  files: z.array(CheckpointFileSchema),
  /** Unified diff (a/ b/ prefixes); when cut, it ends with a `# loom: diff truncated` line. */
  patch: z.string(),
  truncated: z.boolean(),
  omittedFiles: z.array(z.string()),
  /**
   * The whole-thread diff only: the delegated children that work in worktrees of their own, whose changes are on
   * their branches rather than in this diff, with how many files their checkpoints recorded changed.
   */
  childWork: z.array(z.object({ threadId: z.string(), title: z.string(), branch: z.string().nullable(), files: z.number().int().nonnegative() })).optional(),
});
export type ThreadDiffOutput = z.infer<typeof ThreadDiffOutput>;

export const ThreadCheckpointsOutput = z.object({ threadId: z.string(), checkpoints: z.array(CheckpointSchema) });
export type ThreadCheckpointsOutput = z.infer<typeof ThreadCheckpointsOutput>;

export const WorktreeThreadIdsInput = z.object({ worktreePath: z.string().min(1).max(4096) }).strict();
export type WorktreeThreadIdsInput = z.infer<typeof WorktreeThreadIdsInput>;
export const WorktreeThreadIdsOutput = z.object({ worktreePath: z.string(), threadIds: z.array(z.string()) });
export type WorktreeThreadIdsOutput = z.infer<typeof WorktreeThreadIdsOutput>;

/** A Loom-managed worktree and the thread it was made for. */
export const ManagedWorktreeView = z.object({
  projectId: z.string(),
  path: z.string(),
  branch: z.string().nullable(),
  head: z.string().nullable(),
  threadId: z.string().nullable(),
  /** live: its thread exists; deleted: its thread was deleted (prune removes it); unknown: no thread of this state dir made it; missing: its folder is gone (prune forgets it). */
  state: z.enum(["live", "deleted", "unknown", "missing"]),
});
export type ManagedWorktreeView = z.infer<typeof ManagedWorktreeView>;

export const WorktreeListOutput = z.object({ worktrees: z.array(ManagedWorktreeView) });
export type WorktreeListOutput = z.infer<typeof WorktreeListOutput>;

export const WorktreePruneOutput = z.object({
  removed: z.array(z.object({ threadId: z.string(), path: z.string(), checkpointId: z.string().nullable() })),
  forgotten: z.array(z.object({ path: z.string(), threadId: z.string().nullable() })),
  kept: z.array(z.object({ threadId: z.string(), path: z.string(), reason: z.string() })),
});
export type WorktreePruneOutput = z.infer<typeof WorktreePruneOutput>;

export const MergeIntoParentInput = z
  .object({
    threadId: ThreadId.describe("The worktree child whose branch is merged into its parent's worktree"),
    /** Commit the child's uncommitted changes on its branch first (default true). */
    commitChild: z.boolean().optional(),
    message: z.string().min(1).max(10_000).optional(),
    /**
     * A conflict or a failed check: answer it (report, the default), hand it
     * back to the child as a run with what stood in the way (child), or to a
     * resolver thread working on the merge in progress (resolver, with `resolver` or the project's).
     */
    onRefused: z.enum(["report", "child", "resolver"]).optional(),
    /** onRefused resolver: the provider instance (and model) of the resolver thread, and what it is told after Loom's account of the merge. */
    resolver: z
      .object({
        providerInstanceId: z.string().min(1).max(512),
        model: z.string().min(1).max(200).optional(),
        instructions: z.string().min(1).max(20_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type MergeIntoParentInput = z.infer<typeof MergeIntoParentInput>;

/** A test-gated merge's check (docs/workspaces.md, "Test-gated merges"). */
export const MergeCheckSchema = z.object({
  command: z.string(),
  outcome: z.enum(["succeeded", "failed", "aborted", "timed_out"]),
  exitCode: z.number().int().nullable(),
  durationMs: z.number().int().nonnegative(),
  /** The last 16 KiB of its output. */
  output: z.string(),
});
export type MergeCheck = z.infer<typeof MergeCheckSchema>;

/**
 * The workspace codes (`details.workspaceCode` of a refused merge) that
 * `onRefused: "child"` or `"resolver"` hands on: a conflict or a failed
 * check. Other refusals are the person's to settle. The codes are
 * src/workspaces/errors.ts's, which checks them.
 */
export const HANDED_ON_WORKSPACE_CODES = ["workspace_merge_conflict", "workspace_check_failed"] as const;

export const MergeIntoParentOutput = z.object({
  threadId: z.string(),
  parentThreadId: z.string(),
  /**
   * returned_to_child: refused (onRefused child); the parent is as it was, `returnedToChild` says why and which run the child got.
   * handed_to_resolver: refused (onRefused resolver); the parent is as it was, `resolver` names the thread working on it, and the entry merges once it ends.
   */
  outcome: z.enum(["up_to_date", "fast_forward", "merge_commit", "returned_to_child", "handed_to_resolver"]),
  /** The parent worktree's HEAD after the merge, and before it. */
  commit: z.string(),
  previousHead: z.string(),
  childCommit: z.string(),
  childBranch: z.string().nullable(),
  /** The commit made of the child's uncommitted changes first, if any. */
  childChangesCommit: z.string().nullable(),
  files: z.array(CheckpointFileSchema),
  /** The project's checkCommand as it ran on the merged state before the parent moved; null without one, or when there was nothing to merge. */
  check: MergeCheckSchema.nullable().optional(),
  returnedToChild: z
    .object({ runId: z.string().nullable(), workspaceCode: z.string(), files: z.array(z.string()), check: MergeCheckSchema.nullable() })
    .optional(),
  resolver: z.object({ threadId: z.string(), taskId: z.string(), runId: z.string(), workspaceCode: z.string(), files: z.array(z.string()) }).optional(),
});
export type MergeIntoParentOutput = z.infer<typeof MergeIntoParentOutput>;

/** Open a pull request for a worktree thread's branch (docs/workspaces.md, "Pull requests"). */
export const OpenPullRequestInput = z
  .object({
    threadId: ThreadId.describe("A thread with a worktree of its own, whose branch becomes the pull request's head"),
    title: z.string().min(1).max(500).optional().describe("Default: the thread's title"),
    body: z.string().max(60_000).optional(),
    base: z.string().min(1).max(500).optional().describe("Default: the parent thread's branch, else the repository's default branch"),
    draft: z.boolean().optional(),
  })
  .strict();
export type OpenPullRequestInput = z.infer<typeof OpenPullRequestInput>;

export const OpenPullRequestOutput = z.object({
  threadId: z.string(),
  url: z.string(),
  branch: z.string(),
  base: z.string().nullable(),
  /** The commit of the thread's uncommitted changes made before the push, or null when there were none. */
  changesCommit: z.string().nullable(),
});
export type OpenPullRequestOutput = z.infer<typeof OpenPullRequestOutput>;
