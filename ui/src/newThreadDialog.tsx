import { useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import { errorText } from "./api.js";
import { LaunchEstimateLine } from "./launchEstimate.js";

const RUNTIME_MODES = ["approval-required", "auto-accept-edits", "full-access"] as const;
const INTERACTION_MODES = ["default", "plan"] as const;
/** Where the thread works, as t3_thread_launch's workspaceStrategy takes it, in words. */
const WORKSPACES = [
  { value: "root", label: "project root" },
  { value: "worktree", label: "new worktree (a branch of its own)" },
  { value: "existing_worktree", label: "existing worktree" },
] as const;
type Workspace = (typeof WORKSPACES)[number]["value"];

/** A configured project (GET /api/ui/capabilities lists them; the first is the default). */
interface Project {
  readonly projectId: string;
  readonly name: string;
}

/**
 * Launch a thread: message, title and the provider, model, runtime and interaction mode pickers from the capability
 * records, with the likely spend on that provider and model; the project (when there are several), and where it works:
 * the project root, a new worktree from a base ref, or an existing worktree (t3_thread_launch's workspaceStrategy).
 */
export function NewThreadDialog(props: {
  readonly client: LoomWsClient;
  readonly capabilities: (CapabilitiesOutput & { readonly projects?: readonly Project[] }) | null;
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
  const projects = props.capabilities?.projects ?? [];
  const [projectId, setProjectId] = useState(projects[0]?.projectId ?? "");
  const [workspace, setWorkspace] = useState<Workspace>("root");
  const [baseRef, setBaseRef] = useState("");
  const [worktreePath, setWorktreePath] = useState("");
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
        ...(projectId === "" ? {} : { projectId }),
        ...(workspace === "root" ? {} : { workspaceStrategy: workspace }),
        ...(workspace === "worktree" && baseRef.trim() !== "" ? { baseRef: baseRef.trim() } : {}),
        ...(workspace === "existing_worktree" ? { worktreePath: worktreePath.trim() } : {}),
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
        <div className="row">
          {projects.length > 1 ? (
            <label>
              Project
              <select aria-label="Project" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
                {projects.map((p) => (
                  <option key={p.projectId} value={p.projectId}>{p.name === p.projectId ? p.name : `${p.name} (${p.projectId})`}</option>
                ))}
              </select>
            </label>
          ) : null}
          <label>
            Workspace
            <select aria-label="Workspace" value={workspace} onChange={(e) => setWorkspace(e.target.value as Workspace)}>
              {WORKSPACES.map((w) => (
                <option key={w.value} value={w.value}>{w.label}</option>
              ))}
            </select>
          </label>
          {workspace === "worktree" ? (
            <label>
              Base ref
              <input aria-label="Base ref" value={baseRef} onChange={(e) => setBaseRef(e.target.value)} placeholder="the project's HEAD" />
            </label>
          ) : null}
          {workspace === "existing_worktree" ? (
            <label>
              Worktree path
              <input aria-label="Worktree path" value={worktreePath} onChange={(e) => setWorktreePath(e.target.value)} placeholder="/path/to/a/worktree of the project" />
            </label>
          ) : null}
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
          <button type="submit" className="primary" disabled={busy || message.trim() === "" || provider?.available === false || (workspace === "existing_worktree" && worktreePath.trim() === "")}>
            Launch
          </button>
        </div>
      </form>
    </div>
  );
}
