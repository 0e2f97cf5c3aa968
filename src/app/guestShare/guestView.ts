import { SNAPSHOT_ROW_LIMIT, SNAPSHOT_USER_TURN_LIMIT, type ThreadGuestShare } from "../../contracts/entities/guestShares.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem, TurnItemOf, TurnItemType } from "../../contracts/turnItems.js";
import type { Timeline } from "../../engine/timeline.js";

/**
 * What a guest sees of a shared thread (docs/guest-share.md, "What a guest
 * sees"): its title, whether it is working, and its transcript redacted row by
 * row. Messages, plans and to-dos are shown as written; a tool call shows only
 * what kind of work it was, never its arguments, output or results; a file
 * change or checkpoint shows the changed paths, never their contents; secret
 * requests and reasoning are not shown at all.
 */
export const GuestRowKind = {
  user: "user",
  assistant: "assistant",
  plan: "plan",
  todo: "todo",
  files: "files",
  activity: "activity",
  notice: "notice",
  error: "error",
} as const;
export type GuestRowKind = (typeof GuestRowKind)[keyof typeof GuestRowKind];

export interface GuestRow {
  readonly id: string;
  readonly position: number;
  readonly kind: GuestRowKind;
  readonly text: string;
  /** Changed paths of a files row, else empty. */
  readonly paths: readonly string[];
}

export interface GuestPendingMessage {
  readonly id: string;
  readonly text: string;
  readonly status: "pending" | "sent" | "dismissed";
  readonly submittedAt: string;
}

export interface GuestView {
  readonly title: string;
  readonly guestName: string;
  readonly working: boolean;
  readonly expiresAt: string;
  /** Oldest first: the newest SNAPSHOT_ROW_LIMIT rows, from at most SNAPSHOT_USER_TURN_LIMIT user turns. */
  readonly rows: readonly GuestRow[];
  /** True when older rows were left out by the limits. */
  readonly truncated: boolean;
  /** The guest's own messages and what became of them. */
  readonly messages: readonly GuestPendingMessage[];
}

type Shown = { readonly kind: GuestRowKind; readonly text: string; readonly paths?: readonly string[] } | null;

const row = (kind: GuestRowKind, text: string, paths?: readonly string[]): Shown => ({ kind, text, ...(paths === undefined ? {} : { paths }) });

/** Each turn item type and what a guest sees of it: the compiler checks every type is here. */
const GUEST_ROW_OF: { readonly [T in TurnItemType]: (item: TurnItemOf<T>) => Shown } = {
  notification: (item) => row("notice", item.title ?? "A notice for the agent"),
  user_message: (item) => row("user", item.text),
  assistant_message: (item) => row("assistant", item.text),
  reasoning: () => null,
  proposed_plan: (item) => row("plan", item.markdown),
  todo_list: (item) => row("todo", item.items.map((todo) => `[${todo.status}] ${todo.content}`).join("\n")),
  user_input_request: () => row("activity", "The agent asked the owner a question"),
  file_change: (item) => row("files", "Changed files", item.changes.map((change) => change.path)),
  command_execution: (item) => row("activity", `Ran a command (${item.status})`),
  file_search: () => row("activity", "Searched the files"),
  web_search: () => row("activity", "Searched the web"),
  approval_request: (item) => row("activity", `Asked the owner for approval (${item.status})`),
  checkpoint: (item) => (item.files.length === 0 ? null : row("files", "Checkpoint", item.files.map((file) => file.path))),
  run_interrupt_request: () => row("activity", "Asked to stop"),
  run_interrupt_result: (item) => row("activity", `Stop: ${item.outcome}`),
  system_notice: (item) => row("notice", item.text),
  error: (item) => row("error", item.message),
  compaction: () => row("activity", "Compacted its context"),
  handoff: (item) => row("activity", `Switched to provider ${item.toProvider}`),
  fork: () => row("activity", "Forked the thread"),
  thread_created: () => row("activity", "Started another thread"),
  secret_request: () => null,
  subagent: () => row("activity", "Delegated a task"),
  dynamic_tool: (item) => row("activity", `Used the tool ${item.toolName}`),
};

function guestRowOf(item: TurnItem): GuestRow | null {
  const shown = (GUEST_ROW_OF[item.type] as (item: TurnItem) => Shown)(item);
  return shown === null ? null : { id: item.id, position: item.position, kind: shown.kind, text: shown.text, paths: shown.paths ?? [] };
}

/**
 * The newest rows, oldest first, within SNAPSHOT_ROW_LIMIT rows and
 * SNAPSHOT_USER_TURN_LIMIT user turns (a user turn is a user message and the
 * rows after it). Hidden items count toward neither limit.
 */
export function guestRows(timeline: Timeline, threadId: string): { rows: GuestRow[]; truncated: boolean } {
  const rows: GuestRow[] = [];
  let userTurns = 0;
  let truncated = false;
  const pageSize = 200;
  let before: number | undefined;
  for (;;) {
    const page = timeline.items(threadId, { order: "desc", limit: pageSize, ...(before === undefined ? {} : { before }) });
    for (const item of page) {
      const shown = guestRowOf(item);
      if (shown === null) continue;
      // Newest first: once the 20th user turn's own message is in, every older row belongs to an older turn.
      if (rows.length === SNAPSHOT_ROW_LIMIT || userTurns === SNAPSHOT_USER_TURN_LIMIT) {
        truncated = true;
        return { rows: rows.reverse(), truncated };
      }
      if (shown.kind === "user") userTurns += 1;
      rows.push(shown);
    }
    if (page.length < pageSize) return { rows: rows.reverse(), truncated };
    before = page[page.length - 1]!.position;
  }
}

export function guestView(timeline: Timeline, thread: AppThread, share: ThreadGuestShare, working: boolean): GuestView {
  const { rows, truncated } = guestRows(timeline, thread.id);
  return {
    title: thread.title,
    guestName: share.guest?.name ?? "",
    working,
    expiresAt: share.expiresAt,
    rows,
    truncated,
    messages: share.messages.map((message) => ({ id: message.id, text: message.text, status: message.status, submittedAt: message.submittedAt })),
  };
}
