import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";

/** Every provider instance with its availability (and why not), models, runtime modes and steering. */
export function ProvidersView({ capabilities }: { readonly capabilities: CapabilitiesOutput | null }) {
  return (
    <div className="pad page">
      <div className="page-head">
        <h2>Providers</h2>
      </div>
      {capabilities === null ? <div className="muted">Loading…</div> : null}
      {capabilities !== null ? (
        <table className="grid" aria-label="Provider instances">
          <thead>
            <tr>
              <th>Provider</th>
              <th>Availability</th>
              <th>Models</th>
              <th>Runtime modes</th>
              <th>Steering</th>
              <th>Child tasks</th>
            </tr>
          </thead>
          <tbody>
            {capabilities.providers.map((p) => (
              <tr key={p.providerInstanceId} data-provider-id={p.providerInstanceId}>
                <td>
                  <div className="task-title">{p.displayName}</div>
                  <div className="muted small">
                    {p.providerInstanceId} · {p.driver}
                  </div>
                </td>
                <td>{p.available ? <span className="badge badge-done">available</span> : <span className="badge badge-failed">unavailable</span>} {p.reason ? <div className="muted small">{p.reason}</div> : null}</td>
                <td>
                  {p.models.length === 0 ? "—" : p.models.join(", ")}
                  {p.omittedModels > 0 ? <span className="muted"> and {p.omittedModels} more</span> : null}
                </td>
                <td>{p.runtimeModes === undefined ? "all" : p.runtimeModes.join(", ")}</td>
                <td>{p.steering ? "yes" : "no"}</td>
                <td>{p.canRunChildTasks ? "yes" : "no"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
