import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import { errorText } from "./api.js";
import { LaunchEstimateLine } from "./launchEstimate.js";

const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "full-access"] as const;
const INTERACTION_MODES = ["default", "plan"] as const;

/** Launch a thread: message, title and the provider, model, runtime and interaction mode pickers from the capability records, with the likely spend on that provider and model. */
export function NewThreadDialog(props: {
  readonly client: LoomWsClient;
  readonly capabilities: CapabilitiesOutput | null;
  readonly close: () => void;
  readonly opened: (threadId: string) => void;
}) {
  const providers = props.capabilities?.providers ?? [];
  const firstAvailable = providers.find((p) => p.available);
  const [providerId, setProviderId] = useState(firstAvailable?.providerInstanceId ?? "");
  const provider = providers.find((p) => p.providerInstanceId === providerId);
  const [model, setModel] = useState("");
  const [runtimeMode, setRuntimeMode] = useState<string>("");
  const [interactionMode, setInteractionMode] = useState<string>("");
  const [title, setTitle] = useState("");
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const offeredModes = provider?.runtimeModes ?? RUNTIME_MODES;

  const launch = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    props.client
      .request("orchestration.launchThread", {
        message,
        ...(title.trim() === "" ? {} : { title: title.trim() }),
        ...(providerId === "" ? {} : { target: { providerInstanceId: providerId, ...(model === "" ? {} : { model }) } }),
        ...(runtimeMode === "" ? {} : { runtimeMode: runtimeMode as (typeof RUNTIME_MODES)[number] }),
        ...(interactionMode === "" ? {} : { interactionMode: interactionMode as (typeof INTERACTION_MODES)[number] }),
      })
      .then(
        (launched) => props.opened(launched.threadId),
        (e: unknown) => {
          setBusy(false);
          setError(errorText(e));
        },
      );
  };

  return (
    <div className="modal-backdrop" onClick={props.close}>
      <form className="modal" role="dialog" aria-label="New thread" onSubmit={launch} onClick={(e) => e.stopPropagation()}>
        <h2>New thread</h2>
        <label>
          Provider
          <select aria-label="Provider" value={providerId} onChange={(e) => { setProviderId(e.target.value); setModel(""); }}>
            {providers.map((p) => (
              <option key={p.providerInstanceId} value={p.providerInstanceId} disabled={!p.available}>
                {p.displayName} ({p.providerInstanceId}){p.available ? "" : ` — unavailable: ${p.reason ?? "no reason given"}`}
              </option>
            ))}
          </select>
        </label>
        {provider !== undefined && !provider.available ? <div className="error-text">{provider.reason}</div> : null}
        <label>
          Model
          <select aria-label="Model" value={model} onChange={(e) => setModel(e.target.value)}>
            <option value="">provider default</option>
            {[...new Set(provider?.models ?? [])].map((m) => (
              <option key={m} value={m}>{m}</option>
            ))}
          </select>
        </label>
        <LaunchEstimateLine providerInstanceId={providerId} model={model} />
        <div className="row">
          <label>
            Runtime mode
            <select aria-label="Runtime mode" value={runtimeMode} onChange={(e) => setRuntimeMode(e.target.value)}>
              <option value="">default</option>
              {RUNTIME_MODES.map((m) => (
                <option key={m} value={m} disabled={!offeredModes.includes(m)}>
                  {m}{offeredModes.includes(m) ? "" : " (not offered by this provider)"}
                </option>
              ))}
            </select>
          </label>
          <label>
            Interaction
            <select aria-label="Interaction mode" value={interactionMode === "" ? "default" : interactionMode} onChange={(e) => setInteractionMode(e.target.value)}>
              {INTERACTION_MODES.map((m) => (
                <option key={m} value={m}>{m}</option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Title
          <input aria-label="Title" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="optional" />
        </label>
        <label>
          Message
          <textarea aria-label="First message" value={message} onChange={(e) => setMessage(e.target.value)} rows={6} autoFocus />
        </label>
        {error ? <div className="error-text">{error}</div> : null}
        <div className="actions">
          <button type="button" onClick={props.close}>Cancel</button>
          <button type="submit" className="primary" disabled={busy || message.trim() === "" || provider?.available === false}>
            Launch
          </button>
        </div>
      </form>
    </div>
  );
}
