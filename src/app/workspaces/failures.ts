import type { FailureCode } from "../../contracts/failures.js";
import { type WorkspaceError, type WorkspaceErrorCode, isWorkspaceError } from "../../workspaces/errors.js";
import { AppError } from "../errors.js";
import { CheckFailedError } from "../../workspaces/checkedMerge.js";

/** Every workspace library error and the wire failure it becomes (the compiler checks the table is total). */
export const FAILURE_OF_WORKSPACE_ERROR: { readonly [C in WorkspaceErrorCode]: FailureCode } = {
  workspace_invalid_input: "invalid_request",
  workspace_path_not_found: "workspace_unavailable",
  workspace_not_a_repository: "workspace_unavailable",
  workspace_no_commits: "workspace_unavailable",
  workspace_ref_not_found: "invalid_request",
  workspace_not_managed: "invalid_request",
  workspace_worktree_dirty: "workspace_conflict",
  workspace_name_unavailable: "workspace_conflict",
  workspace_locked: "workspace_busy",
  workspace_rollback_conflict: "workspace_conflict",
  workspace_merge_conflict: "workspace_conflict",
  workspace_unrelated_histories: "workspace_conflict",
  workspace_local_changes_in_the_way: "workspace_conflict",
  workspace_head_moved: "workspace_busy",
  workspace_setup_spawn_failed: "workspace_unavailable",
  workspace_git_failed: "orchestration_error",
  workspace_ports_exhausted: "workspace_unavailable",
  workspace_check_failed: "workspace_conflict",
};

/** A workspace error as an AppError: its code and files travel in `details`. */
export function workspaceFailure(error: WorkspaceError): AppError {
  return new AppError(FAILURE_OF_WORKSPACE_ERROR[error.code], error.message, {
    cause: error,
    details: { workspaceCode: error.code, ...(error.files.length > 0 ? { files: [...error.files] } : {}), ...(error instanceof CheckFailedError ? { check: error.check } : {}) },
  });
}

/** Run git work for an app function: a workspace error becomes its wire failure, anything else is rethrown. */
export async function asAppFailure<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isWorkspaceError(error)) throw workspaceFailure(error);
    throw error;
  }
}
