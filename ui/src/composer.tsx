import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import { dispatch, errorText } from "./api.js";

/** A provider's record from GET /api/ui/capabilities, which adds whether it can stop a running turn. */
export type Provider = CapabilitiesOutput["providers"][number] & { readonly interrupt?: boolean };

/** Why the running turn cannot be interrupted, or null when it can. */
export function interruptBlocked(provider: Provider | undefined): string | null {
  return provider?.interrupt === false ? `${provider.displayName} cannot stop a turn` : null;
}
const MODES = ["auto", "queue", "steer", "restart"] as const;
export type Mode = (typeof MODES)[number];

/** Why a send mode cannot be used now, or null when it can. */
export function modeBlocked(mode: Mode, provider: Provider | undefined, live: boolean): string | null {
  if (mode === "steer" && provider !== undefined && !provider.steering) return `${provider.displayName} cannot be steered`;
  if (mode === "steer" && !live) return "nothing is running to steer";
  if (mode === "restart" && provider?.interrupt === false) return `${provider.displayName} cannot stop a turn, so it cannot restart one`;
  if (mode === "restart" && !live) return "nothing is running to restart";
  return null;
}

/**
 * Enter sends (Ctrl/Cmd+Enter too); Shift+Enter is a new line. A key that
 * ends an input method's composition (keyCode 229) never sends.
 */
export function sendsOnKey(e: { readonly key: string; readonly shiftKey: boolean; readonly nativeEvent: { readonly isComposing: boolean; readonly keyCode: number } }): boolean {
  return e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing && e.nativeEvent.keyCode !== 229;
}

/** Send to the thread (auto / queue / steer / restart), interrupt its run, or stop it. */
export function Composer(props: { readonly client: LoomWsClient; readonly threadId: string; readonly provider: Provider | undefined; readonly live: boolean }) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<Mode>("auto");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const blocked = modeBlocked(mode, props.provider, props.live);
  const run = (f: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    f().then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
      },
    );
  };
  const send = () => {
    if (text.trim() === "" || blocked !== null) return;
    const message = text;
    run(async () => {
      await dispatch(props.client, "message.dispatch", { threadId: props.threadId, text: message, mode });
      setText("");
    });
  };
  return (
    <div className="composer">
      <textarea
        aria-label="Message"
        placeholder="Message the agent (Enter to send, Shift+Enter for a new line)"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (sendsOnKey(e)) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div className="composer-bar">
        <label>
          Mode{" "}
          <select aria-label="Send mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
            {MODES.map((m) => {
              const reason = modeBlocked(m, props.provider, props.live);
              return (
                <option key={m} value={m} disabled={reason !== null && m !== mode} title={reason ?? undefined}>
                  {m}
                  {reason === null ? "" : ` (${reason})`}
                </option>
              );
            })}
          </select>
        </label>
        {blocked ? <span className="muted">{blocked}</span> : null}
        <span className="spacer" />
        {props.live && interruptBlocked(props.provider) !== null ? <span className="muted">{interruptBlocked(props.provider)}</span> : null}
        <button className="danger" disabled={busy || !props.live || interruptBlocked(props.provider) !== null} onClick={() => run(() => dispatch(props.client, "run.interrupt", { threadId: props.threadId }))} title={interruptBlocked(props.provider) ?? "Interrupt the running turn"}>
          Interrupt
        </button>
        <button className="primary" disabled={busy || text.trim() === "" || blocked !== null} onClick={send}>
          Send
        </button>
      </div>
      {error ? <div className="error-text">{error}</div> : null}
    </div>
  );
}
