import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { Run } from "../../src/contracts/entities/runs.js";
import type { TurnItem } from "../../src/contracts/turnItems.js";
import { dispatch, errorText } from "./api.js";

/** A queued run with its message text, when the loaded timeline holds it. */
export interface QueuedEntry {
  readonly run: Run;
  readonly text: string | null;
}

/** The thread's queue, next first: its queued runs in queueRank order, each with its user message. */
export function queuedEntries(runs: ReadonlyMap<string, Run>, items: readonly TurnItem[]): QueuedEntry[] {
  const queued = [...runs.values()].filter((run) => run.status === "queued").sort((a, b) => (a.queueRank ?? a.ordinal) - (b.queueRank ?? b.ordinal));
  const texts = new Map<string, string>();
  for (const item of items) if (item.type === "user_message") texts.set(item.messageId, item.text);
  return queued.map((run) => ({ run, text: run.messageId === null ? null : (texts.get(run.messageId) ?? null) }));
}

/**
 * The queue editor: the messages waiting for the running turn, next first.
 * Each can move up or down (queued-run.reorder), be edited before it starts
 * (queued-run.edit), be cancelled (queued-run.cancel) or be steered into the
 * running turn now (queued-message.promote-to-steer, disabled with the reason
 * when the turn cannot take it). A queue held by Stop can be resumed.
 */
export function QueuePanel(props: { readonly client: LoomWsClient; readonly threadId: string; readonly entries: readonly QueuedEntry[]; readonly steerBlocked: string | null }) {
  const { client, threadId, entries } = props;
  const [editing, setEditing] = useState<{ runId: string; text: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (entries.length === 0) return null;
  const run = (type: string, data: Record<string, unknown>, after?: () => void) => {
    setBusy(true);
    setError(null);
    dispatch(client, type, { threadId, ...data }).then(
      () => {
        setBusy(false);
        after?.();
      },
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  const move = (index: number, by: -1 | 1) => {
    const order = entries.map((e) => e.run.id);
    const [moved] = order.splice(index, 1);
    order.splice(index + by, 0, moved!);
    run("queued-run.reorder", { runIds: order });
  };
  const held = entries.some((e) => e.run.held);
  return (
    <section className="queue" aria-label="Queue">
      <header className="queue-head">
        <strong>Queued ({entries.length})</strong>
        <span className="muted">{held ? "held by Stop" : "run one after another when the current turn ends"}</span>
        <span className="spacer" />
        {held ? (
          <button type="button" disabled={busy} onClick={() => run("queue.resume", {})}>
            Resume queue
          </button>
        ) : null}
      </header>
      <ol className="queue-list">
        {entries.map((entry, index) => {
          const label = entry.text ?? `run ${entry.run.ordinal}`;
          return (
            <li key={entry.run.id} className="queue-row" data-run-id={entry.run.id}>
              {editing?.runId === entry.run.id ? (
                <div className="queue-edit">
                  <textarea aria-label="Edit the queued message" value={editing.text} onChange={(e) => setEditing({ runId: entry.run.id, text: e.target.value })} />
                  <div className="actions">
                    <button type="button" onClick={() => setEditing(null)}>
                      Cancel edit
                    </button>
                    <button type="button" className="primary" disabled={busy || editing.text.trim() === ""} onClick={() => run("queued-run.edit", { runId: entry.run.id, text: editing.text }, () => setEditing(null))}>
                      Save
                    </button>
                  </div>
                </div>
              ) : (
                <>
                  <span className="queue-pos">{index + 1}.</span>
                  <span className="queue-text" title={label}>
                    {label}
                  </span>
                  <span className="queue-actions">
                    <button type="button" aria-label={`Move up: ${label}`} disabled={busy || index === 0} onClick={() => move(index, -1)}>
                      ↑
                    </button>
                    <button type="button" aria-label={`Move down: ${label}`} disabled={busy || index === entries.length - 1} onClick={() => move(index, 1)}>
                      ↓
                    </button>
                    <button type="button" disabled={busy || entry.text === null} onClick={() => setEditing({ runId: entry.run.id, text: entry.text ?? "" })}>
                      Edit
                    </button>
                    <button
                      type="button"
                      disabled={busy || props.steerBlocked !== null}
                      title={props.steerBlocked ?? "Send this message into the running turn now"}
                      onClick={() => run("queued-message.promote-to-steer", { runId: entry.run.id })}
                    >
                      Steer now
                    </button>
                    <button type="button" className="danger" disabled={busy} onClick={() => run("queued-run.cancel", { runId: entry.run.id })}>
                      Cancel
                    </button>
                  </span>
                </>
              )}
            </li>
          );
        })}
      </ol>
      {error ? <div className="error-text">{error}</div> : null}
    </section>
  );
}
