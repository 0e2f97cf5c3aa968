import { useEffect, useState } from "react";
import { type ThreadGuestShare, isShareLive } from "../../src/contracts/entities/guestShares.js";
import { callApi, errorText } from "./api.js";

/**
 * Live guest share on a thread (docs/guest-share.md), for its owner: Share…
 * opens a share and shows its link to copy, Stop sharing closes it at once,
 * and the guest's pending messages wait under the header to be sent to the
 * agent or dismissed. The share itself (guest, messages) is the thread
 * record's `guestShare`, so it follows the thread live; the link is read
 * from the server, which alone can sign it.
 */

interface ShareLink {
  readonly url: string;
  readonly expiresAt: string;
}

const sharePath = (threadId: string) => `/api/threads/${encodeURIComponent(threadId)}/guest-share`;

export function GuestShareAction(props: { readonly threadId: string; readonly share: ThreadGuestShare | null }) {
  const live = isShareLive(props.share, new Date().toISOString());
  const [link, setLink] = useState<ShareLink | null>(null);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const shareId = live ? props.share.shareId : null;
  // A share opened elsewhere (the CLI, another page): read its link once it shows on the thread.
  useEffect(() => {
    if (shareId === null) {
      setLink(null);
      return;
    }
    let current = true;
    callApi<{ link: ShareLink | null }>("GET", sharePath(props.threadId)).then(
      (read) => current && setLink(read.link),
      (error: unknown) => current && setFailure(errorText(error)),
    );
    return () => {
      current = false;
    };
  }, [props.threadId, shareId]);
  const act = (method: "POST" | "DELETE") => {
    setBusy(true);
    setFailure(null);
    callApi<ShareLink>(method, sharePath(props.threadId)).then(
      (answer) => {
        setBusy(false);
        setLink(method === "POST" ? answer : null);
      },
      (error: unknown) => {
        setBusy(false);
        setFailure(errorText(error));
      },
    );
  };
  const guest = props.share?.guest?.name ?? null;
  return (
    <span className="guest-share" aria-label="Guest share">
      {!live ? (
        <button disabled={busy} onClick={() => act("POST")} title="A link one guest browser may open for 24 hours to watch this thread and suggest messages">
          Share…
        </button>
      ) : (
        <>
          <span className="small muted">{guest === null ? "Shared, not opened yet" : `Shared with ${guest}`}</span>
          {link === null ? null : <input className="share-link" readOnly value={link.url} aria-label="Guest link" onFocus={(e) => e.currentTarget.select()} />}
          {link === null ? null : (
            <button onClick={() => void navigator.clipboard?.writeText(link.url).catch(() => undefined)} title="Copy the guest link">
              Copy link
            </button>
          )}
          <button className="danger" disabled={busy} onClick={() => act("DELETE")} title="Close the share at once: the guest's page stops">
            Stop sharing
          </button>
        </>
      )}
      {failure === null ? null : (
        <span className="small error-text" role="status">
          {failure}
        </span>
      )}
    </span>
  );
}

/**
 * Sending or dismissing guest messages (`POST
 * /api/threads/:threadId/guest-messages/:id/send|dismiss`): the message being
 * decided, the last refusal, and `decide`; `onDecided` runs after each one.
 */
export function useGuestMessageDecision(onDecided: () => void = () => undefined) {
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const decide = (threadId: string, messageId: string, verb: "send" | "dismiss") => {
    setBusy(messageId);
    setFailure(null);
    callApi("POST", `/api/threads/${encodeURIComponent(threadId)}/guest-messages/${encodeURIComponent(messageId)}/${verb}`).then(
      () => {
        setBusy(null);
        onDecided();
      },
      (error: unknown) => {
        setBusy(null);
        setFailure(errorText(error));
      },
    );
  };
  return { busy, failure, decide };
}

/** A guest message's two buttons. */
export function GuestMessageActions(props: { readonly disabled: boolean; readonly decide: (verb: "send" | "dismiss") => void }) {
  return (
    <span className="actions">
      <button className="primary" disabled={props.disabled} onClick={() => props.decide("send")} title="Send it to the agent, prefixed with who wrote it">
        Send to the agent
      </button>
      <button disabled={props.disabled} onClick={() => props.decide("dismiss")}>
        Dismiss
      </button>
    </span>
  );
}

/** The guest's messages waiting for the owner: each sent to the agent (prefixed with who wrote it) or dismissed. */
export function GuestMessages(props: { readonly threadId: string; readonly share: ThreadGuestShare | null }) {
  const { busy, failure, decide } = useGuestMessageDecision();
  const pending = (props.share?.messages ?? []).filter((message) => message.status === "pending");
  if (pending.length === 0) return null;
  const guest = props.share?.guest?.name ?? "the guest";
  return (
    <section className="guest-messages" aria-label="Guest messages">
      {pending.map((message) => (
        <div key={message.id} className="guest-message" data-guest-message-id={message.id}>
          <span className="small muted">{guest} suggests:</span> <span className="guest-message-text">{message.text}</span>
          {(message.attachments ?? []).map((attachment) => (
            <a
              key={attachment.id}
              className="small guest-attachment"
              href={`/api/threads/${encodeURIComponent(props.threadId)}/guest-messages/${encodeURIComponent(message.id)}/attachments/${encodeURIComponent(attachment.id)}`}
              download={attachment.name}
              title={`${attachment.type}, ${attachment.size} bytes`}
            >
              {attachment.name}
            </a>
          ))}
          <GuestMessageActions disabled={busy !== null} decide={(verb) => decide(props.threadId, message.id, verb)} />
        </div>
      ))}
      {failure === null ? null : (
        <div className="small error-text" role="status">
          {failure}
        </div>
      )}
    </section>
  );
}
