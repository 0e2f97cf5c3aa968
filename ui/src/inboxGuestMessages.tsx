import { useEffect, useState } from "react";
import type { GuestAttachment } from "../../src/contracts/entities/guestShares.js";
import { callApi } from "./api.js";
import { GuestMessageActions, useGuestMessageDecision } from "./guestShareAction.js";

/** One pending guest message as `GET /api/guest-messages` lists it (docs/guest-share.md). */
interface PendingGuestMessage {
  readonly threadId: string;
  readonly threadTitle: string;
  readonly guestName: string;
  readonly id: string;
  readonly text: string;
  readonly attachments?: readonly GuestAttachment[];
}

/**
 * The guests' suggestions waiting on the owner, in the inbox: each with its
 * thread, Send to the agent and Dismiss. Read again whenever a thread changes
 * (`version`: a guest's message changes its thread), a burst costing one read.
 */
export function InboxGuestMessages(props: { readonly version: string; readonly open: (threadId: string) => void }) {
  const [messages, setMessages] = useState<readonly PendingGuestMessage[]>([]);
  const [reads, setReads] = useState(0);
  const { busy, failure, decide } = useGuestMessageDecision(() => setReads((n) => n + 1));
  useEffect(() => {
    let current = true;
    const timer = setTimeout(() => {
      callApi<{ messages: readonly PendingGuestMessage[] }>("GET", "/api/guest-messages").then(
        (answer) => current && setMessages(answer.messages),
        () => undefined,
      );
    }, 150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [props.version, reads]);
  if (messages.length === 0) return null;
  return (
    <section className="guest-messages inbox-guest-messages" aria-label="Guest suggestions">
      <h3>Guest suggestions</h3>
      {messages.map((message) => (
        <div key={message.id} className="guest-message inbox-guest-message" data-guest-message-id={message.id}>
          <a href={`/t/${encodeURIComponent(message.threadId)}`} onClick={(e) => { e.preventDefault(); props.open(message.threadId); }}>
            {message.threadTitle}
          </a>{" "}
          <span className="small muted">{message.guestName} suggests:</span> <span className="guest-message-text">{message.text}</span>
          {(message.attachments ?? []).length > 0 ? <span className="small muted"> ({(message.attachments ?? []).map((a) => a.name).join(", ")})</span> : null}
          <GuestMessageActions disabled={busy !== null} decide={(verb) => decide(message.threadId, message.id, verb)} />
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
