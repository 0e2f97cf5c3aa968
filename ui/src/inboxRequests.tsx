import { useEffect, useState } from "react";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { callApi, errorText } from "./api.js";
import { badgeOf, needsYou } from "./status.js";

/** A pending approval or question as `GET /api/requests` lists it (src/app/requests/inbox.ts). */
interface InboxRequestView {
  readonly requestId: string;
  readonly threadId: string;
  readonly threadTitle: string;
  readonly parentThreadId: string | null;
  readonly approval: boolean;
  readonly title: string;
  readonly detail: string;
  readonly questions: readonly { readonly id: string; readonly question: string }[];
}

type Response = { decision: "accept" | "accept_for_session" | "decline" } | { answers: Record<string, string> } | { dismiss: true };

/**
 * Every pending approval and question, answered where it is listed: the
 * command or the questions, the thread's place in its tree, Approve /
 * Approve for session / Decline, or a reply box (`POST
 * /api/requests/:id/respond`, the inbox the CLI answers too). Read again
 * whenever the threads waiting on you change, so an answer given anywhere
 * drops out.
 */
export function InboxRequests(props: { readonly threads: ReadonlyMap<string, ThreadShell>; readonly open: (threadId: string) => void }) {
  const [requests, setRequests] = useState<readonly InboxRequestView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The threads waiting on you, as they stand: a request appears or goes only as one of them does, or changes.
  const statuses = [...props.threads.values()]
    .filter((row) => needsYou(badgeOf(row)))
    .map((row) => `${row.id}:${row.updatedAt}`)
    .join("|");
  const [reads, setReads] = useState(0);
  useEffect(() => {
    let current = true;
    callApi<{ requests: InboxRequestView[] }>("GET", "/api/requests").then(
      (answer) => {
        if (!current) return;
        setRequests(answer.requests);
        setError(null);
      },
      (failure: unknown) => current && setError(errorText(failure)),
    );
    return () => {
      current = false;
    };
  }, [statuses, reads]);
  if (error !== null) return <p className="error-text">{error}</p>;
  if (requests === null || requests.length === 0) return null;
  const path = (request: InboxRequestView): string => {
    const titles: string[] = [];
    let parent = request.parentThreadId;
    for (let depth = 0; parent !== null && depth < 8; depth++) {
      const row = props.threads.get(parent);
      if (row === undefined) break;
      titles.unshift(row.title || row.id);
      parent = row.parentThreadId ?? null;
    }
    return [...titles, request.threadTitle].join(" › ");
  };
  return (
    <ul className="inbox-requests">
      {requests.map((request) => (
        <RequestRow key={request.requestId} request={request} path={path(request)} open={props.open} answered={() => setReads((n) => n + 1)} />
      ))}
    </ul>
  );
}

function RequestRow({ request, path, open, answered }: { request: InboxRequestView; path: string; open: (threadId: string) => void; answered: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const respond = (response: Response) => {
    setBusy(true);
    setError(null);
    callApi("POST", `/api/requests/${encodeURIComponent(request.requestId)}/respond`, response).then(answered, (failure: unknown) => {
      setBusy(false);
      setError(errorText(failure));
    });
  };
  return (
    <li className="item needs-you inbox-request" data-request-id={request.requestId} data-thread-id={request.threadId}>
      <div className="item-head">
        <span className="item-title">{request.approval ? `Approval: ${request.title}` : request.title}</span>
        <a
          className="small"
          href={`/t/${encodeURIComponent(request.threadId)}`}
          onClick={(e) => {
            e.preventDefault();
            open(request.threadId);
          }}
        >
          {path}
        </a>
      </div>
      {request.approval ? (
        <>
          {request.detail === "" ? null : <pre className="code">{request.detail}</pre>}
          <div className="actions">
            <button className="primary" disabled={busy} onClick={() => respond({ decision: "accept" })}>
              Approve
            </button>
            <button disabled={busy} onClick={() => respond({ decision: "accept_for_session" })}>
              Approve for session
            </button>
            <button className="danger" disabled={busy} onClick={() => respond({ decision: "decline" })}>
              Decline
            </button>
          </div>
        </>
      ) : (
        <form
          className="question-form"
          onSubmit={(e) => {
            e.preventDefault();
            respond({ answers: Object.fromEntries(request.questions.map((q) => [q.id, answers[q.id] ?? ""])) });
          }}
        >
          {request.questions.map((q) => (
            <label key={q.id} className="question">
              {q.question}
              <input aria-label={`reply to ${q.question}`} value={answers[q.id] ?? ""} onChange={(e) => setAnswers({ ...answers, [q.id]: e.target.value })} />
            </label>
          ))}
          <div className="actions">
            <button className="primary" type="submit" disabled={busy || request.questions.some((q) => (answers[q.id] ?? "").trim() === "")}>
              Reply
            </button>
            <button type="button" disabled={busy} onClick={() => respond({ dismiss: true })}>
              Dismiss
            </button>
          </div>
        </form>
      )}
      {error === null ? null : <p className="error-text">{error}</p>}
    </li>
  );
}
