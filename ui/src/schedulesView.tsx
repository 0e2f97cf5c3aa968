import { useCallback, useEffect, useState } from "react";
import type { ListScheduledTasksOutput, RunScheduledTaskNowOutput, ScheduledTaskOutput } from "../../src/contracts/tools/scheduleTools.js";
import { callApi, errorText } from "./api.js";
import type { Provider } from "./composer.js";
import { ScheduleForm } from "./scheduleForm.js";

type Task = ScheduledTaskOutput;

function taskPath(task: Task, tail = ""): string {
  return `/api/schedules/${encodeURIComponent(task.scheduledTaskId)}${tail}`;
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

function triggerText(trigger: Task["trigger"]): string {
  switch (trigger.type) {
    case "interval": {
      const minutes = trigger.everyMs / 60_000;
      return minutes >= 60 && minutes % 60 === 0 ? `every ${minutes / 60} h` : minutes >= 1 ? `every ${minutes} min` : `every ${trigger.everyMs / 1000} s`;
    }
    case "daily":
      return `daily at ${trigger.at}${trigger.weekdays === null ? "" : ` on ${trigger.weekdays.map((d) => WEEKDAYS[d]).join(", ")}`}`;
    case "webhook":
      return `webhook${trigger.signed ? " (signed)" : ""}`;
  }
}

function when(iso: string | null): string {
  return iso === null ? "—" : new Date(iso).toLocaleString();
}

/**
 * Scheduled tasks (docs/schedules.md) over the owner's HTTP API: each task's
 * trigger, next and last fire; New and Edit (ui/src/scheduleForm.tsx), Pause /
 * Resume, Run now and Delete (asked twice). The list reloads on each event of
 * the server's change stream (`GET /api/schedules/changes`): a task saved,
 * fired or deleted by anyone, an agent or the scheduler included.
 */
export function SchedulesView(props: { readonly open: (threadId: string) => void; readonly providers: readonly Provider[] }) {
  const [tasks, setTasks] = useState<readonly Task[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  const [form, setForm] = useState<{ readonly task: Task | null } | null>(null);
  const reload = useCallback(() => callApi<ListScheduledTasksOutput>("GET", "/api/schedules").then((out) => setTasks(out.tasks)), []);
  useEffect(() => {
    reload().catch((e: unknown) => setError(errorText(e)));
    // Live: every change, and every (re)connection of the stream, since changes may have been missed while it was down.
    const changes = new EventSource("/api/schedules/changes");
    const refresh = () => void reload().catch((e: unknown) => setError(errorText(e)));
    changes.addEventListener("changed", refresh);
    changes.addEventListener("open", refresh);
    return () => changes.close();
  }, [reload]);
  const act = (task: Task, f: () => Promise<unknown>) => {
    setBusy(task.scheduledTaskId);
    setError(null);
    f()
      .then(reload)
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setBusy(null));
  };
  return (
    <div className="pad page">
      <div className="page-head">
        <h2>Schedules</h2>
        <span className="spacer" />
        <button type="button" className="primary" onClick={() => setForm({ task: null })}>
          New scheduled task
        </button>
        <button type="button" onClick={() => void reload().catch((e: unknown) => setError(errorText(e)))}>
          Refresh
        </button>
      </div>
      {error ? <div className="error-text">{error}</div> : null}
      {tasks === null ? <div className="muted">Loading…</div> : null}
      {tasks !== null && tasks.length === 0 ? (
        <p className="muted">
          No scheduled tasks. Create one here; agents create them with the <code>schedule_task</code> tool, programs with <code>POST /api/schedules</code>.
        </p>
      ) : null}
      {tasks !== null && tasks.length > 0 ? (
        <table className="grid" aria-label="Scheduled tasks">
          <thead>
            <tr>
              <th>Task</th>
              <th>Trigger</th>
              <th>Next</th>
              <th>Last fire</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tasks.map((task) => (
              <tr key={task.scheduledTaskId} data-task-id={task.scheduledTaskId}>
                <td>
                  <div className="task-title">{task.title}</div>
                  <div className="muted small">
                    {task.projectId} · {task.providerInstanceId} · {task.fireCount} fire{task.fireCount === 1 ? "" : "s"}
                  </div>
                </td>
                <td>
                  {triggerText(task.trigger)} {task.enabled ? null : <span className="badge badge-snoozed">paused</span>}
                </td>
                <td>{when(task.nextFireAt)}</td>
                <td>
                  {task.lastFire === null ? (
                    "—"
                  ) : (
                    <span className="last-fire">
                      {when(task.lastFire.at)} <span className="pill">{task.lastFire.status}</span>{" "}
                      {task.lastFire.threadId !== null ? (
                        <a href={`/t/${encodeURIComponent(task.lastFire.threadId)}`} onClick={(e) => { e.preventDefault(); props.open(task.lastFire!.threadId!); }}>
                          Open
                        </a>
                      ) : null}
                      {task.lastFire.reason ? <span className="muted"> {task.lastFire.reason}</span> : null}
                    </span>
                  )}
                </td>
                <td>
                  <div className="row-actions">
                  <button type="button" disabled={busy !== null} onClick={() => setForm({ task })}>
                    Edit
                  </button>
                  <button type="button" disabled={busy !== null} onClick={() => act(task, () => callApi("PATCH", taskPath(task), { enabled: !task.enabled }))}>
                    {task.enabled ? "Pause" : "Resume"}
                  </button>
                  <button type="button" disabled={busy !== null} onClick={() => act(task, () => callApi<RunScheduledTaskNowOutput>("POST", taskPath(task, "/run")))}>
                    Run now
                  </button>
                  {confirmDelete === task.scheduledTaskId ? (
                    <button type="button" className="danger" disabled={busy !== null} onClick={() => act(task, () => callApi("DELETE", taskPath(task)).then(() => setConfirmDelete(null)))}>
                      Really delete
                    </button>
                  ) : (
                    <button type="button" className="danger" disabled={busy !== null} onClick={() => setConfirmDelete(task.scheduledTaskId)}>
                      Delete
                    </button>
                  )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {form !== null ? (
        <ScheduleForm
          task={form.task}
          providers={props.providers}
          close={() => setForm(null)}
          saved={() => {
            setForm(null);
            void reload().catch((e: unknown) => setError(errorText(e)));
          }}
        />
      ) : null}
    </div>
  );
}
