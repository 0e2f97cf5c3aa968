import { useEffect, useState } from "react";
import type { LaunchEstimate } from "../../src/contracts/tools/launchEstimate.js";
import { callApi, errorText } from "./api.js";

const seconds = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 1_000)} s` : `${Math.round(ms / 60_000)} min`);

/**
 * What work on the chosen provider and model is likely to spend, shown
 * before it starts (`GET /api/ui/estimate`, docs/budgets.md, "Estimate
 * before launch"): the medians of earlier completed tasks of the same
 * instance and model, with how many; without history it says so and shows
 * no figure.
 */
export function LaunchEstimateLine({ providerInstanceId, model }: { readonly providerInstanceId: string; readonly model: string }) {
  const [estimate, setEstimate] = useState<LaunchEstimate | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setEstimate(null);
    setError(null);
    if (providerInstanceId === "") return;
    const query = new URLSearchParams({ providerInstanceId, ...(model === "" ? {} : { model }) });
    callApi<LaunchEstimate>("GET", `/api/ui/estimate?${query.toString()}`).then(
      (out) => live && setEstimate(out),
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [providerInstanceId, model]);
  if (error !== null) return <div className="estimate muted" aria-label="Estimate">Estimate unavailable: {error}</div>;
  const group = estimate?.groups[0];
  if (group === undefined) return null;
  if (group.sampleSize === 0) return <div className="estimate muted" aria-label="Estimate">No earlier task on this provider and model yet: no estimate.</div>;
  const { tokens, costUsd, wallClockMs } = group.perCall;
  const parts = [
    tokens === null ? null : `~${Math.round(tokens).toLocaleString("en-US")} tokens`,
    costUsd === null ? "cost unknown" : `~$${costUsd.toFixed(costUsd < 0.1 ? 4 : 2)}`,
    wallClockMs === null ? null : `~${seconds(wallClockMs)}`,
  ].filter((part) => part !== null);
  return (
    <div className="estimate muted" aria-label="Estimate">
      Likely spend: {parts.join(", ")} <span title="medians of earlier completed tasks of this provider instance and model">(from {group.sampleSize} earlier {group.sampleSize === 1 ? "task" : "tasks"})</span>
    </div>
  );
}
