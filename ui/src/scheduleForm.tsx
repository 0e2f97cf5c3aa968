import { type FormEvent, useState } from "react";
import type { ScheduledTaskOutput } from "../../src/contracts/tools/scheduleTools.js";
import { callApi, errorText } from "./api.js";
import type { Provider } from "./composer.js";

const WEEKDAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/**
 * Create a scheduled task, or edit one (`task`), over the owner's HTTP API
 * (`POST /api/schedules`, `PATCH /api/schedules/:id`). The server checks the
 * input: a bad trigger, interval or provider comes back as its typed error,
 * shown here, and nothing is saved.
 */
export function ScheduleForm(props: {
  readonly task: ScheduledTaskOutput | null;
  readonly providers: readonly Provider[];
  readonly close: () => void;
  readonly saved: () => void;
}) {
  const task = props.task;
  const trigger = task?.trigger;
  const [title, setTitle] = useState(task?.title ?? "");
  const [prompt, setPrompt] = useState(task?.prompt ?? "");
  const [kind, setKind] = useState<"interval" | "daily" | "webhook">(trigger?.type ?? "interval");
  const [minutes, setMinutes] = useState(trigger?.type === "interval" ? String(trigger.everyMs / 60_000) : "60");
  const [at, setAt] = useState(trigger?.type === "daily" ? trigger.at : "09:00");
  const [weekdays, setWeekdays] = useState<readonly number[]>(trigger?.type === "daily" ? (trigger.weekdays ?? []) : []);
  const [providerId, setProviderId] = useState(task?.providerInstanceId ?? "");
  const [projectId, setProjectId] = useState(task?.projectId ?? "");
  const [overlap, setOverlap] = useState(task?.overlap ?? "skip");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, unknown> = { prompt, overlap };
    if (title.trim() !== "") body.title = title;
    // A webhook's trigger holds its secret, which the page never sees: editing keeps it.
    if (kind === "interval") body.trigger = { type: "interval", everyMs: Math.round(Number(minutes) * 60_000) };
    else if (kind === "daily") body.trigger = { type: "daily", at, ...(weekdays.length > 0 ? { weekdays: [...weekdays].sort() } : {}) };
    if (providerId !== "") body.target = { providerInstanceId: providerId };
    if (projectId.trim() !== "") body.projectId = projectId.trim();
    setBusy(true);
    setError(null);
    const request = task === null ? callApi("POST", "/api/schedules", body) : callApi("PATCH", `/api/schedules/${encodeURIComponent(task.scheduledTaskId)}`, body);
    request.then(
      () => props.saved(),
      (err: unknown) => {
        setBusy(false);
        setError(errorText(err));
      },
    );
  };

  const name = task === null ? "New scheduled task" : "Edit scheduled task";
  return (
    <div className="modal-backdrop" onClick={props.close}>
      <form className="modal" role="dialog" aria-label={name} onSubmit={submit} onClick={(e) => e.stopPropagation()}>
        <h2>{name}</h2>
        <label>
          Title
          <input aria-label="Title" value={title} onChange={(e) => setTitle(e.target.value)} placeholder="(from the prompt)" />
        </label>
        <label>
          Prompt
          <textarea aria-label="Prompt" value={prompt} onChange={(e) => setPrompt(e.target.value)} placeholder="What each fire asks the agent to do" />
        </label>
        <div className="row">
          <label>
            Trigger
            <select aria-label="Trigger" value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
              <option value="interval">every N minutes</option>
              <option value="daily">daily at a time</option>
              {kind === "webhook" ? <option value="webhook">webhook (kept as it is)</option> : null}
            </select>
          </label>
          {kind === "interval" ? (
            <label>
              Every (minutes)
              <input aria-label="Every (minutes)" inputMode="decimal" value={minutes} onChange={(e) => setMinutes(e.target.value)} />
            </label>
          ) : null}
          {kind === "daily" ? (
            <label>
              At (HH:MM, the server's time)
              <input aria-label="At" value={at} onChange={(e) => setAt(e.target.value)} />
            </label>
          ) : null}
        </div>
        {kind === "daily" ? (
          <fieldset className="weekdays">
            <legend>On (none: every day)</legend>
            {WEEKDAY_NAMES.map((day, i) => (
              <label key={day} className="check">
                <input type="checkbox" checked={weekdays.includes(i)} onChange={(e) => setWeekdays(e.target.checked ? [...weekdays, i] : weekdays.filter((d) => d !== i))} />
                {day}
              </label>
            ))}
          </fieldset>
        ) : null}
        <div className="row">
          <label>
            Provider
            <select aria-label="Provider" value={providerId} onChange={(e) => setProviderId(e.target.value)}>
              {task === null ? <option value="">the server's default</option> : null}
              {props.providers.map((p) => (
                <option key={p.providerInstanceId} value={p.providerInstanceId}>
                  {p.displayName} ({p.providerInstanceId}){p.available ? "" : ` — unavailable: ${p.reason ?? "no reason given"}`}
                </option>
              ))}
            </select>
          </label>
          <label>
            Project
            <input aria-label="Project" value={projectId} onChange={(e) => setProjectId(e.target.value)} placeholder="the first configured" />
          </label>
          <label>
            While the last fire runs
            <select aria-label="Overlap" value={overlap} onChange={(e) => setOverlap(e.target.value as typeof overlap)}>
              <option value="skip">skip the fire</option>
              <option value="queue">queue behind it</option>
            </select>
          </label>
        </div>
        {error ? (
          <div className="error-text" role="alert">
            {error}
          </div>
        ) : null}
        <div className="actions">
          <button type="button" onClick={props.close}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy}>
            {task === null ? "Create" : "Save"}
          </button>
        </div>
      </form>
    </div>
  );
}
