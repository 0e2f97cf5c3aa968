import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { inboxRows } from "./inbox.js";
import { badgeOf } from "./status.js";

/** Every keyboard shortcut of the page: the help overlay (`?`) lists this table. */
export const SHORTCUTS: readonly { readonly keys: string; readonly what: string }[] = [
  { keys: "j / k", what: "move down / up the sidebar's threads" },
  { keys: "Enter", what: "open the thread under the cursor" },
  { keys: "w", what: "open the next thread waiting on you (an approval or a question)" },
  { keys: "n", what: "new thread" },
  { keys: "/", what: "search" },
  { keys: "a / d", what: "approve / decline the open thread's first pending approval" },
  { keys: "Enter / Shift+Enter", what: "send the message / start a new line (in the composer; Ctrl+Enter sends too)" },
  { keys: "Alt+↑ / Alt+↓", what: "move a focused pinned thread up / down the sidebar (or drag it)" },
  { keys: "g i / g s / g p", what: "inbox / schedules / providers" },
  { keys: "?", what: "this help" },
  { keys: "Escape", what: "close a dialog or this help" },
];

/** Shortcuts never fire while the reader types in a field, nor with a modifier held. */
export function isTyping(e: KeyboardEvent): boolean {
  const target = e.target as HTMLElement | null;
  return (target !== null && (target.isContentEditable || target.closest("input, textarea, select") !== null)) || e.ctrlKey || e.metaKey || e.altKey;
}

/** The thread ids of the sidebar's visible rows, top to bottom (collapsed subtrees and filtered rows left out). */
export function sidebarOrder(): string[] {
  return [...document.querySelectorAll<HTMLElement>(".sidebar .tree-row[data-thread-id]")].map((el) => el.dataset.threadId!);
}

/** The next thread after `current` that waits on the reader (an approval or a question), most urgent first, wrapping around. */
export function nextWaiting(threads: ReadonlyMap<string, ThreadShell>, current: string | null): string | null {
  const waiting = inboxRows(threads).filter((row) => {
    const badge = badgeOf(row);
    return badge === "waiting-approval" || badge === "waiting-input";
  });
  if (waiting.length === 0) return null;
  const at = waiting.findIndex((row) => row.id === current);
  return waiting[(at + 1) % waiting.length]!.id;
}

export function ShortcutHelp({ close }: { readonly close: () => void }) {
  return (
    <div className="modal-backdrop" onClick={close}>
      <div className="modal" role="dialog" aria-label="Keyboard shortcuts" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <table className="shortcuts">
          <tbody>
            {SHORTCUTS.map((s) => (
              <tr key={s.keys}>
                <td>
                  <kbd>{s.keys}</kbd>
                </td>
                <td>{s.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted small">Shortcuts do nothing while you type in a field.</p>
        <div className="actions">
          <button onClick={close}>Close</button>
        </div>
      </div>
    </div>
  );
}
