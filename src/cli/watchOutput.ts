import type { Run } from "../contracts/entities/runs.js";
import type { BoundedSnapshot, CommandOutputUpdate, ThreadStreamUpdate } from "../contracts/wire/projections.js";
import type { TurnItem, TurnItemType } from "../contracts/turnItems.js";
import { messageAuthor } from "./output.js";

/**
 * How `loom threads watch` shows a thread's live stream to a person. Pure:
 * the printer holds what it has shown and turns each wire update into the
 * text to add. Items are upserts on the wire, so an item is shown when it
 * first appears and again only when what its line says changes (a command
 * completing, an approval answered); a streamed assistant message is shown as
 * its deltas arrive and its completed item only ends the line.
 */

type ItemOf<T extends TurnItemType> = Extract<TurnItem, { type: T }>;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function status(item: { readonly status: string }): string {
  return ` (${item.status})`;
}

/** One line per item type: a table the compiler checks is total. */
const ITEM_LINES: { readonly [T in TurnItemType]: (item: ItemOf<T>) => string } = {
  notification: (item) => `notice: ${oneLine(item.title === null ? item.text : `${item.title}: ${item.text}`, 200)}`,
  user_message: (item) => `${messageAuthor(item.createdBy)}: ${item.text}`,
  assistant_message: (item) => `assistant: ${item.text}`,
  reasoning: (item) => `reasoning: ${oneLine(item.summary ?? item.text ?? "", 200)}`,
  proposed_plan: (item) => `plan: ${item.title ?? `${item.steps.length} steps`}`,
  todo_list: (item) => `todo: ${item.items.length} items`,
  user_input_request: (item) => `question ${item.requestId}${status(item)}`,
  file_change: (item) => `files: ${item.changes.map((change) => change.path).join(", ")}${status(item)}`,
  command_execution: (item) => `$ ${oneLine(item.command, 200)}${status(item)}${item.exitCode === null ? "" : ` exit ${item.exitCode}`}`,
  file_search: (item) => `file search: ${oneLine(item.query, 120)} (${item.matches.length} matches)`,
  web_search: (item) => `web search: ${oneLine(item.query, 120)}`,
  approval_request: (item) => `approval ${item.requestId}: ${oneLine(item.title, 120)}${status(item)}${item.decision === null ? "" : ` ${item.decision}`}`,
  checkpoint: (item) => `checkpoint #${item.appRunOrdinal}${status(item)} ${item.files.length} files`,
  run_interrupt_request: (item) => `interrupt requested${item.reason === null ? "" : `: ${oneLine(item.reason, 120)}`}`,
  run_interrupt_result: (item) => `interrupt ${item.outcome}`,
  system_notice: (item) => `${item.level}: ${oneLine(item.text, 200)}`,
  error: (item) => `error${item.code === null ? "" : ` ${item.code}`}: ${oneLine(item.message, 200)}`,
  compaction: (item) => `context compacted (${item.trigger})`,
  handoff: (item) => `handoff to ${item.toProvider}${status(item)}`,
  fork: (item) => `fork ${item.sourceThreadId} → ${item.targetThreadId}`,
  thread_created: (item) => `child ${item.childThreadId} [${item.relation}] "${oneLine(item.title, 60)}"`,
  secret_request: (item) => `secret ${item.secretName}${status(item)}`,
  subagent: (item) =>
    `subagent ${item.childThreadId ?? item.subagentId}${item.agentLabel === null ? "" : ` ${item.agentLabel}`}${status(item)}${item.result === null ? "" : `: ${oneLine(item.result, 120)}`}`,
  dynamic_tool: (item) => `tool ${item.toolName}${status(item)}`,
};

export function itemLine(item: TurnItem): string {
  return (ITEM_LINES[item.type] as (item: TurnItem) => string)(item);
}

export class WatchPrinter {
  /** The line last shown for each item. */
  private readonly shown = new Map<string, string>();
  private readonly runStatus = new Map<string, string>();
  /** The assistant message whose deltas are being shown, line still open. */
  private streaming: string | null = null;
  /** Command output streams whose line is still open. */
  private readonly outputOpen = new Set<string>();

  /** The text a thread stream update adds ("" when it shows nothing new). */
  update(update: ThreadStreamUpdate): string {
    switch (update.kind) {
      case "snapshot":
        return this.snapshot(update.snapshot);
      case "resumed":
        return `${this.closeLine()}-- resumed after sequence ${update.afterSequence}\n`;
      case "delta": {
        if (this.streaming === update.itemId) return update.text;
        const before = this.closeLine();
        this.streaming = update.itemId;
        this.shown.set(update.itemId, "streaming");
        return `${before}assistant: ${update.text}`;
      }
      case "output":
        return "";
      case "event":
        return this.event(update.event.type, update.event.data);
    }
  }

  /** The text a command output update adds: its lines indented under the command. */
  output(outputStreamId: string, update: CommandOutputUpdate): string {
    const text = update.text;
    if (text === "") return "";
    const open = this.outputOpen.has(outputStreamId);
    const lines = text.split("\n");
    const trailing = text.endsWith("\n");
    if (trailing) lines.pop();
    const body = lines.map((line, i) => (i === 0 && open ? line : `  │ ${line}`)).join("\n");
    if (trailing) this.outputOpen.delete(outputStreamId);
    else this.outputOpen.add(outputStreamId);
    return `${this.streaming === null ? "" : this.closeLine()}${body}${trailing ? "\n" : ""}`;
  }

  private snapshot(snapshot: BoundedSnapshot): string {
    const thread = snapshot.thread;
    const lines = [`thread ${thread.id} "${oneLine(thread.title, 80)}"`];
    if (snapshot.historyCursor !== null) lines.push(`… earlier items not shown (loom threads read ${thread.id})`);
    let text = `${lines.join("\n")}\n`;
    for (const run of snapshot.runs) this.runStatus.set(run.id, run.status);
    for (const item of snapshot.items) text += this.item(item);
    return text;
  }

  private event(type: string, data: unknown): string {
    const payload = data as { item?: TurnItem; run?: Run; thread?: { title?: string } };
    if (type === "turn-item.updated" && payload.item !== undefined) return this.item(payload.item);
    if ((type === "run.created" || type === "run.updated") && payload.run !== undefined) {
      const run = payload.run;
      if (this.runStatus.get(run.id) === run.status) return "";
      this.runStatus.set(run.id, run.status);
      return `${this.closeLine()}-- run ${run.id} ${run.status}\n`;
    }
    if (type === "thread.metadata-updated" && typeof payload.thread?.title === "string") return `${this.closeLine()}-- title: ${payload.thread.title}\n`;
    if (type === "thread.archived" || type === "thread.unarchived" || type === "thread.deleted") return `${this.closeLine()}-- ${type.slice("thread.".length)}\n`;
    return "";
  }

  private item(item: TurnItem): string {
    if (item.type === "assistant_message" && item.streaming) return "";
    if (item.type === "assistant_message" && this.shown.get(item.id) === "streaming") {
      // Its text was shown as it streamed; the completed item ends the line.
      this.shown.set(item.id, itemLine(item));
      return this.streaming === item.id ? this.closeLine() : "";
    }
    const line = itemLine(item);
    if (this.shown.get(item.id) === line) return "";
    this.shown.set(item.id, line);
    return `${this.closeLine()}${line}\n`;
  }

  /** What ends the output when the watch stops: the line a streamed message left open. */
  finish(): string {
    return this.closeLine() + (this.outputOpen.size > 0 ? (this.outputOpen.clear(), "\n") : "");
  }

  private closeLine(): string {
    if (this.streaming === null) return "";
    this.streaming = null;
    return "\n";
  }
}
