import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { InboxGuestMessages } from "./inboxGuestMessages.js";
import { InboxRequests } from "./inboxRequests.js";
import { Badge } from "./sidebar.js";
import { badgeOf, isLive, needsYou } from "./status.js";

/** Threads a person should look at, most urgent first: waiting on them, failed, then finished and unread. */
export function inboxRows(threads: ReadonlyMap<string, ThreadShell>): ThreadShell[] {
  const rank = (row: ThreadShell): number => {
    const badge = badgeOf(row);
    if (badge === "waiting-approval" || badge === "waiting-input") return 0;
    if (badge === "failed") return 1;
    if (row.unread && badge === "done") return 2;
    return 3;
  };
  return [...threads.values()].filter((row) => rank(row) < 3).sort((a, b) => rank(a) - rank(b) || b.updatedAt.localeCompare(a.updatedAt));
}

export function Inbox(props: { readonly threads: ReadonlyMap<string, ThreadShell>; readonly open: (threadId: string) => void }) {
  const rows = inboxRows(props.threads);
  const running = [...props.threads.values()].filter((row) => isLive(badgeOf(row)) && !needsYou(badgeOf(row)));
  // A guest's message changes its thread's record: the newest change anywhere re-reads the suggestions.
  let newest = "";
  for (const row of props.threads.values()) if (row.updatedAt > newest) newest = row.updatedAt;
  return (
    <div className="inbox pad">
      <h2>Needs you</h2>
      {rows.length === 0 ? <p className="muted">Nothing needs you. {running.length > 0 ? `${running.length} thread${running.length === 1 ? " is" : "s are"} working.` : ""}</p> : null}
      <InboxRequests threads={props.threads} open={props.open} />
      <InboxGuestMessages version={newest} open={props.open} />
      <ul className="inbox-list">
        {rows.map((row) => (
          <li key={row.id} data-thread-id={row.id}>
            <Badge kind={badgeOf(row)} />
            <a href={`/t/${encodeURIComponent(row.id)}`} onClick={(e) => { e.preventDefault(); props.open(row.id); }}>
              {row.title || row.id}
            </a>
            <span className="muted"> {row.providerInstanceId ?? ""} · {new Date(row.updatedAt).toLocaleTimeString()}</span>
          </li>
        ))}
      </ul>
      {running.length > 0 ? (
        <>
          <h3>Working</h3>
          <ul className="inbox-list">
            {running.map((row) => (
              <li key={row.id} data-thread-id={row.id}>
                <Badge kind={badgeOf(row)} />
                <a href={`/t/${encodeURIComponent(row.id)}`} onClick={(e) => { e.preventDefault(); props.open(row.id); }}>{row.title || row.id}</a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <p className="muted small">Keys: j/k move through the sidebar, Enter opens, w the next thread waiting on you, n new thread, / search, ? all shortcuts.</p>
    </div>
  );
}
