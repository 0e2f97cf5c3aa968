import type { MergeIntoParentInput, MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { answerOf, enqueueMerge, mergeEnded } from "./mergeQueue.js";

/**
 * Merge a worktree child's branch into its parent's worktree (owner only),
 * through the parent's merge queue: the child's branch is queued and merged
 * when its turn comes (mergeChild: commit the child, merge, with the
 * project's checkCommand checked first), and the answer waits for that
 * entry's outcome. Conflicts, a failed check and local changes in the way
 * are answered as the refusal (workspace_conflict, details.files,
 * details.check, details.entryId) and nothing is changed; with `onRefused:
 * "child"` a conflict or a failed check goes back to the child as a run
 * instead. Neither thread may have a run going.
 */
export async function mergeIntoParent(ctx: AppContext, caller: Caller, input: MergeIntoParentInput): Promise<MergeIntoParentOutput> {
  const entry = await enqueueMerge(ctx, caller, input);
  return answerOf(await mergeEnded(ctx, entry.entryId));
}
