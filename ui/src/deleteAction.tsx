import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import { callApi, dispatch, errorText } from "./api.js";

interface TreeNode {
  readonly children: readonly TreeNode[];
}

function countBelow(node: TreeNode): number {
  return node.children.reduce((sum, child) => sum + 1 + countBelow(child), 0);
}

/**
 * Delete on a thread (docs/threads.md, `thread.delete`): the thread and every
 * thread under it, after a confirmation that names how many go with it. The
 * count comes from the server's tree with archived threads included, since
 * the sidebar holds only one of the two lists. A refusal is said beside the
 * button; once deleted, the view says so.
 */
export function DeleteAction(props: { readonly client: LoomWsClient; readonly threadId: string; readonly title: string }) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const remove = async (): Promise<void> => {
    const tree = await callApi<{ roots: readonly TreeNode[] }>("GET", `/api/threads/tree?${new URLSearchParams({ root: props.threadId, includeArchived: "1" }).toString()}`);
    const count = tree.roots[0] === undefined ? 0 : countBelow(tree.roots[0]);
    const under = count === 0 ? "" : ` and the ${count} thread${count === 1 ? "" : "s"} under it`;
    if (!window.confirm(`Delete "${props.title}"${under}? Worktrees are removed after a last checkpoint; this cannot be undone.`)) return;
    await dispatch(props.client, "thread.delete", { threadId: props.threadId });
  };
  const click = () => {
    setBusy(true);
    setFailure(null);
    remove().then(
      () => setBusy(false),
      (error: unknown) => {
        setBusy(false);
        setFailure(errorText(error));
      },
    );
  };
  return (
    <>
      <button className="danger" disabled={busy} onClick={click} title="Delete this thread and every thread under it; worktrees are removed after a last checkpoint">
        Delete
      </button>
      {failure === null ? null : (
        <span className="small error-text" role="status">
          {failure}
        </span>
      )}
    </>
  );
}
