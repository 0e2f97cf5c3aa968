import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { dispatch, errorText } from "./api.js";

/** When a snooze choice ends, from `now`: an hour, this evening or tomorrow morning, a week. */
export const SNOOZE_CHOICES: readonly { readonly label: string; readonly until: (now: Date) => Date }[] = [
  { label: "1 hour", until: (now) => new Date(now.getTime() + 3_600_000) },
  { label: "tomorrow 9:00", until: (now) => new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, 9, 0) },
  { label: "1 week", until: (now) => new Date(now.getTime() + 7 * 24 * 3_600_000) },
];

/**
 * Pin / Unpin and Snooze / Unsnooze on the open thread (spec 004's
 * thread.pin, thread.unpin, thread.snooze { until }, thread.unsnooze); a
 * rejection shows its code and message.
 */
export function ThreadActions(props: { readonly client: LoomWsClient; readonly threadId: string; readonly row: ThreadShell | undefined }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { row, client, threadId } = props;
  const run = (type: string, data: Record<string, unknown> = {}) => {
    setBusy(true);
    setError(null);
    dispatch(client, type, { threadId, ...data }).then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  if (row === undefined) return null;
  const pinned = row.pinnedRank !== null;
  const snoozedUntil = row.snoozedUntil !== null && Date.parse(row.snoozedUntil) > Date.now() ? row.snoozedUntil : null;
  return (
    <>
      <button disabled={busy} onClick={() => run(pinned ? "thread.unpin" : "thread.pin")} title={pinned ? "Take it off the top of the sidebar" : "Keep it at the top of the sidebar"}>
        {pinned ? "Unpin" : "Pin"}
      </button>
      {snoozedUntil !== null ? (
        <>
          <span className="muted snoozed-until">Snoozed until {new Date(snoozedUntil).toLocaleString()}</span>
          <button disabled={busy} onClick={() => run("thread.unsnooze")}>
            Unsnooze
          </button>
        </>
      ) : (
        <select
          aria-label="Snooze"
          value=""
          disabled={busy}
          title="Hide it from what needs you until then"
          onChange={(e) => {
            const choice = SNOOZE_CHOICES.find((c) => c.label === e.target.value);
            if (choice !== undefined) run("thread.snooze", { until: choice.until(new Date()).toISOString() });
          }}
        >
          <option value="">Snooze…</option>
          {SNOOZE_CHOICES.map((c) => (
            <option key={c.label} value={c.label}>
              {c.label}
            </option>
          ))}
        </select>
      )}
      {error ? <span className="error-text">{error}</span> : null}
    </>
  );
}
