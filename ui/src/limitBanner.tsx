import { useState } from "react";
import type { ThreadLimitRecovery } from "../../src/contracts/thread.js";
import type { ThreadConfigureOutput } from "../../src/contracts/tools/configurationTools.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import { callApi, errorText } from "./api.js";

/** "14:05" in the browser's time zone, with the day when it is not today. */
function clockOf(iso: string): string {
  const at = new Date(iso);
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

/**
 * A thread a usage limit stopped (docs/limits.md): when the limit resets and
 * whether the work resumes by itself then (after an outage: when it is tried
 * again, unless it moves first), with Switch now, which moves the
 * thread to the instance picked beside it (by default the first available
 * of its failover instances) and continues its work there at once (`POST
 * /api/threads/:id/switch`). A refusal (no failover instance available) is
 * said beside the button.
 */
export function LimitBanner(props: {
  readonly threadId: string;
  readonly recovery: ThreadLimitRecovery;
  readonly current: string | null;
  readonly providers: CapabilitiesOutput["providers"];
}) {
  const [to, setTo] = useState("");
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState<{ readonly ok: boolean; readonly text: string } | null>(null);
  const at = clockOf(props.recovery.resetAt);
  const switchNow = () => {
    setBusy(true);
    setSaid(null);
    callApi<ThreadConfigureOutput>("POST", `/api/threads/${encodeURIComponent(props.threadId)}/switch`, to === "" ? {} : { providerInstanceId: to }).then(
      (result) => {
        setBusy(false);
        setSaid({ ok: true, text: `Moved to ${result.providerInstanceId ?? "another provider"}; the work goes on there.` });
      },
      (failure: unknown) => {
        setBusy(false);
        setSaid({ ok: false, text: errorText(failure) });
      },
    );
  };
  return (
    <div className="limit-banner" role="status" data-testid="limit-banner" title={props.recovery.message}>
      <span>
        {props.recovery.cause === "outage"
          ? `Stopped by provider errors past Loom's retries; the work moves to a failover instance once one is available, else it is tried here again at ${at}.`
          : props.recovery.autoResume
            ? `Waiting for the usage limit to reset at ${at}; the work resumes by itself.`
            : `Stopped by a usage limit until ${at}; send a message to go on after it.`}
      </span>
      <select aria-label="Switch to" value={to} onChange={(e) => setTo(e.target.value)}>
        <option value="">the next failover instance</option>
        {props.providers
          .filter((p) => p.available && p.providerInstanceId !== props.current)
          .map((p) => (
            <option key={p.providerInstanceId} value={p.providerInstanceId}>
              {p.providerInstanceId}
            </option>
          ))}
      </select>
      <button disabled={busy} onClick={switchNow} title="Move this thread to the instance picked and continue its work there now">
        Switch now
      </button>
      {said === null ? null : <span className={said.ok ? "small" : "small error-text"}>{said.text}</span>}
    </div>
  );
}
