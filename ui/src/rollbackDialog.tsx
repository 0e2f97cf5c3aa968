import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import { dispatch, errorText } from "./api.js";

/** The checkpoint a rollback would restore. */
export interface RollbackTarget {
  readonly checkpointId: string;
  readonly label: string;
  readonly files: readonly string[];
}

/**
 * Rollback is one confirmed action: `checkpoint.rollback` restores the
 * thread's workspace to the checkpoint (a running turn is interrupted and its
 * work kept as a checkpoint first), then a rollback_recovery run tells the
 * agent. Uncaptured changes in the way fail the rollback unless forced.
 */
export function RollbackDialog(props: { readonly client: LoomWsClient; readonly threadId: string; readonly target: RollbackTarget; readonly close: () => void }) {
  const [busy, setBusy] = useState(false);
  const [force, setForce] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirm = () => {
    setBusy(true);
    setError(null);
    dispatch(props.client, "checkpoint.rollback", { threadId: props.threadId, checkpointId: props.target.checkpointId, ...(force ? { force: true } : {}) }).then(props.close, (e: unknown) => {
      setBusy(false);
      setError(errorText(e));
    });
  };
  return (
    <div className="modal-backdrop" onClick={props.close}>
      <div className="modal" role="dialog" aria-label="Roll back" onClick={(e) => e.stopPropagation()}>
        <h3>Roll back to {props.target.label}?</h3>
        <p>
          The thread&apos;s workspace is restored to this checkpoint. A running turn is interrupted first and its work is kept as a checkpoint; later
          checkpoints become stale. The agent is told what was rolled back.
        </p>
        {props.target.files.length > 0 ? (
          <p className="muted">
            This checkpoint&apos;s files: {props.target.files.slice(0, 10).join(", ")}
            {props.target.files.length > 10 ? ` and ${props.target.files.length - 10} more` : ""}
          </p>
        ) : null}
        <label className="check">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Overwrite changes made outside the agent&apos;s turns
        </label>
        {error ? <div className="error-text">{error}</div> : null}
        <div className="actions">
          <button type="button" onClick={props.close}>
            Cancel
          </button>
          <button type="button" className="danger" disabled={busy} onClick={confirm} autoFocus>
            Roll back
          </button>
        </div>
      </div>
    </div>
  );
}
