import { HANDED_ON_WORKSPACE_CODES } from "../contracts/workspaceQueries.js";

/**
 * Local errors of the workspaces library. Each carries a stable string code
 * and, where the failure is about particular files, the list of them. A
 * failed operation leaves the workspace as it found it unless its code says
 * otherwise (see each code).
 */
export const WorkspaceErrorCode = {
  /** An input is malformed (empty id, negative ordinal, a cap below 1, ...). */
  invalidInput: "workspace_invalid_input",
  /** The path does not exist or is not a directory. */
  pathNotFound: "workspace_path_not_found",
  /** The path is not inside a git repository with a working tree. */
  notARepository: "workspace_not_a_repository",
  /** The repository has no commit yet, and the operation needs one. */
  noCommits: "workspace_no_commits",
  /** A ref, commit or checkpoint named by the caller does not resolve. */
  refNotFound: "workspace_ref_not_found",
  /** The worktree is not inside the Loom-managed folder given, so Loom will not touch it. */
  notManaged: "workspace_not_managed",
  /** The worktree has modified or untracked files; removing it needs `force`. */
  worktreeDirty: "workspace_worktree_dirty",
  /** No free branch or folder name was found for a new worktree. */
  nameUnavailable: "workspace_name_unavailable",
  /** Another git process holds a lock (index.lock, a ref lock); retry later. */
  locked: "workspace_locked",
  /** Files changed since the latest checkpoint would be overwritten by a rollback; `files` lists them. */
  rollbackConflict: "workspace_rollback_conflict",
  /** The merge has conflicts; `files` lists them. Nothing was changed. */
  mergeConflict: "workspace_merge_conflict",
  /** The two branches share no history. Nothing was changed. */
  unrelatedHistories: "workspace_unrelated_histories",
  /**
   * Uncommitted or untracked files in the target worktree are in the way of
   * an update (merge or rollback); `files` lists them. Nothing was changed.
   */
  localChangesInTheWay: "workspace_local_changes_in_the_way",
  /** The worktree's HEAD moved while the operation ran; nothing was changed. */
  headMoved: "workspace_head_moved",
  /** The setup command could not be started (missing program, bad cwd). */
  setupSpawnFailed: "workspace_setup_spawn_failed",
  /** git itself failed unexpectedly; the message holds its stderr. */
  gitFailed: "workspace_git_failed",
  /** A worktree's port block would lie past the last port (workspaces.portRangeStart, portBlockSize). */
  portsExhausted: "workspace_ports_exhausted",
  /** A test-gated merge's check failed on the merged state; the parent was not changed. */
  checkFailed: "workspace_check_failed",
} as const;
export type WorkspaceErrorCode = (typeof WorkspaceErrorCode)[keyof typeof WorkspaceErrorCode];

/** The refusals of a merge that can be handed on (src/contracts/workspaceQueries.ts); the Set's type checks each is a WorkspaceErrorCode. */
export const HANDED_ON_REFUSALS: ReadonlySet<string> = new Set<WorkspaceErrorCode>(HANDED_ON_WORKSPACE_CODES);

/** Whether calling again with the same input may succeed (the compiler checks the table is total). */
const RETRYABLE: { readonly [K in WorkspaceErrorCode]: boolean } = {
  workspace_invalid_input: false,
  workspace_path_not_found: false,
  workspace_not_a_repository: false,
  workspace_no_commits: false,
  workspace_ref_not_found: false,
  workspace_not_managed: false,
  workspace_worktree_dirty: false,
  workspace_name_unavailable: false,
  workspace_locked: true,
  workspace_rollback_conflict: false,
  workspace_merge_conflict: false,
  workspace_unrelated_histories: false,
  workspace_local_changes_in_the_way: false,
  workspace_head_moved: true,
  workspace_setup_spawn_failed: false,
  workspace_git_failed: false,
  workspace_ports_exhausted: false,
  workspace_check_failed: false,
};

export class WorkspaceError extends Error {
  override readonly name = "WorkspaceError";
  readonly retryable: boolean;
  /** The files the failure is about (conflicts, files in the way), else empty. */
  readonly files: readonly string[];

  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
    options?: { readonly files?: readonly string[]; readonly cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = RETRYABLE[code];
    this.files = options?.files ?? [];
  }
}

export function isWorkspaceError(error: unknown, code?: WorkspaceErrorCode): error is WorkspaceError {
  return error instanceof WorkspaceError && (code === undefined || error.code === code);
}
