import type { AppThread } from "../../contracts/thread.js";
import type { MergeCheck } from "../../contracts/workspaceQueries.js";
import { joinId } from "../../core/ids.js";
import { CheckFailedError } from "../../workspaces/checkedMerge.js";
import type { WorkspaceError } from "../../workspaces/errors.js";
import { type AppContext, execute } from "../context.js";
import { sentMessage } from "../threads/sent.js";

export interface ReturnedToChild {
  readonly runId: string | null;
  readonly workspaceCode: string;
  readonly files: string[];
  readonly check: MergeCheck | null;
}

/**
 * A refused merge handed back to the child that made it (merge-into-parent
 * `onRefused: "child"`): the child gets a run whose message says what stood
 * in the way (the conflicting files, or the check's output) and the parent's
 * commit to bring into its branch, so its agent can resolve it in its own
 * worktree; the merge is then asked for again. Only a conflict or a failed
 * check goes back (HANDED_ON_REFUSALS): other refusals are the person's to settle.
 */
export async function returnToChild(ctx: Pick<AppContext, "orchestrator">, child: AppThread, parent: AppThread, parentCommit: string, error: WorkspaceError): Promise<ReturnedToChild> {
  const check = error instanceof CheckFailedError ? error.check : null;
  const text = briefOf(parent, parentCommit, error, check);
  const key = joinId("merge-refused", child.id, parentCommit, String(ctx.orchestrator.state.lastSequence));
  const messageId = joinId("message", key);
  const executed = await execute(ctx, {
    type: "message.dispatch",
    commandId: joinId("cmd", key),
    data: { threadId: child.id, text, mode: "queue", messageId, runId: joinId("run", key), createdBy: "system", creationSource: "api" },
  });
  const { run } = sentMessage(ctx, executed, child.id, messageId);
  return { runId: run?.id ?? null, workspaceCode: error.code, files: [...error.files], check };
}

function briefOf(parent: AppThread, parentCommit: string, error: WorkspaceError, check: MergeCheck | null): string {
  const where = `your branch${parent.branch === null ? "" : ` into ${parent.title}'s ${parent.branch}`}`;
  const bring = `Bring the parent's current state into your branch first (\`git merge ${parentCommit}\` in your worktree; the commit is in this repository), `;
  if (check !== null) {
    return [
      `Merging ${where} was refused: on the merged state, \`${check.command}\` ${check.outcome === "timed_out" ? "timed out" : `exited with ${check.exitCode ?? "a signal"}`}. Nothing was merged.`,
      `${bring}make \`${check.command}\` pass, and commit. The merge will be asked for again.`,
      "",
      "Its last output:",
      "```",
      check.output.slice(-8_000),
      "```",
    ].join("\n");
  }
  return [
    `Merging ${where} was refused: the merge conflicts in ${error.files.join(", ")}. Nothing was merged.`,
    `${bring}resolve the conflicts keeping both sides' intent, and commit. The merge will be asked for again.`,
  ].join("\n");
}
