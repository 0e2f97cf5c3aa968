import type { HandoffHistoryEntry, RunOrdinalRange } from "../../contracts/entities/contextTransfers.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";

/**
 * The bounded, XML-tagged transcript that carries a thread's context to a
 * provider that has not seen it (spec 004 §1 invariant 5): a provider
 * switch's handoff, a fork's portable context transfer, a merge back. Pure.
 *
 * Budget: at most 16,000 tokens (estimated) and 64,000 bytes of UTF-8 for the
 * whole element. The newest runs are kept; older runs that do not fit are
 * left out, and an <omitted> element says which and where to read them. When
 * even the newest run alone does not fit, its newest items are kept and the
 * one that crosses the budget is cut, with a marker saying how much.
 */

export const HANDOFF_TOKEN_CAP = 16_000;
export const HANDOFF_BYTE_CAP = 64_000;

export interface TranscriptBudget {
  readonly maxTokens: number;
  readonly maxBytes: number;
}

export const HANDOFF_BUDGET: TranscriptBudget = { maxTokens: HANDOFF_TOKEN_CAP, maxBytes: HANDOFF_BYTE_CAP };

/** A token estimate: one token per started 4 characters (as the scripted driver counts usage). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const NON_ASCII = /[\u0080-\uffff]/;

/** The UTF-8 length of a string, without an encoder (core performs no I/O and imports no node:*). */
export function utf8Length(text: string): number {
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

const MARKUP = /[&<>]/;

/** Text as XML character data: `<`, `>` and `&` escaped, so no closing tag can appear inside. */
export function escapeXml(text: string): string {
  return MARKUP.test(text) ? text.replace(/[&<>]/g, (ch) => ESCAPES[ch]!) : text;
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"]/g, (ch) => ESCAPES[ch]!);
}

/** One run and its timeline items (in position order), as the transcript reads them. */
export interface TranscriptRun {
  readonly run: Pick<Run, "ordinal" | "kind" | "status">;
  readonly items: readonly TurnItem[];
}

export interface TranscriptInput {
  /** The element name: handoff, fork, merge_back. */
  readonly tag: string;
  /** Attributes of the element, in order. */
  readonly attributes: readonly (readonly [string, string])[];
  /** What the receiving agent should make of it. */
  readonly instructions: string;
  /** Oldest first. */
  readonly runs: readonly TranscriptRun[];
  /** Text placed before the runs (a merge back's summary in the caller's words). */
  readonly summary?: string;
  /** Where the receiver can read what was cut, e.g. "t3_thread_read on thread thread:1". */
  readonly readMore: string;
  readonly budget?: TranscriptBudget;
}

export interface Transcript {
  readonly text: string;
  readonly bytes: number;
  readonly estimatedTokens: number;
  /** The runs the transcript accounts for: the first to the last input run. */
  readonly covered: RunOrdinalRange | null;
  /** The runs shown, in full or cut; null when none fit. */
  readonly included: RunOrdinalRange | null;
  /** Runs left out entirely (the oldest ones). */
  readonly omittedRuns: number;
  /** Whether some text of a shown run (or the summary) was cut. */
  readonly truncated: boolean;
  /** The user and assistant messages shown, as shown. */
  readonly history: HandoffHistoryEntry[];
}

interface Entry {
  readonly tag: string;
  readonly text: string;
  readonly role: HandoffHistoryEntry["role"] | null;
}

/** Longest one-line activity summary (a command, a tool call) in a transcript. */
const ACTIVITY_LIMIT = 500;

function clip(text: string, limit = ACTIVITY_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}…`;
}

/** What of an item a transcript shows; null for items that carry no conversation (reasoning, checkpoints, lineage markers). */
export function transcriptEntry(item: TurnItem): Entry | null {
  switch (item.type) {
    case "user_message":
      return { tag: "user", text: item.text, role: "user" };
    case "assistant_message":
      return { tag: "assistant", text: item.text, role: "assistant" };
    case "proposed_plan":
      return { tag: "plan", text: item.markdown, role: null };
    case "command_execution":
      return { tag: "activity", text: clip(`$ ${item.command} (exit ${item.exitCode ?? "none"})`), role: null };
    case "file_change":
      return { tag: "activity", text: clip(`changed ${item.changes.map((c) => `${c.path} (${c.kind})`).join(", ")}`), role: null };
    case "dynamic_tool":
      return { tag: "activity", text: clip(`called ${item.toolName} (${item.status})`), role: null };
    case "subagent":
      return { tag: "activity", text: clip(`delegated "${item.agentLabel ?? "task"}" (${item.status})${item.result === null ? "" : `: ${item.result}`}`), role: null };
    case "approval_request":
      return { tag: "activity", text: clip(`approval "${item.title}": ${item.decision ?? item.status}`), role: null };
    case "user_input_request":
      return { tag: "activity", text: clip(`asked: ${item.questions.map((q) => q.question).join(" / ")} (${item.status})`), role: null };
    case "error":
      return { tag: "error", text: clip(item.message, 2_000), role: null };
    case "notification":
    case "system_notice":
      return { tag: "notice", text: clip(item.text, 2_000), role: null };
    default:
      return null;
  }
}

interface Size {
  bytes: number;
  chars: number;
}

function sizeOf(text: string): Size {
  return { bytes: utf8Length(text), chars: text.length };
}

function fits(size: Size, room: Size): boolean {
  return size.bytes <= room.bytes && size.chars <= room.chars;
}

function take(room: Size, size: Size): void {
  room.bytes -= size.bytes;
  room.chars -= size.chars;
}

/**
 * The longest head of `raw` whose escaped form fits `room`, escaped, and how
 * many characters of `raw` it keeps. Never splits an escape or a surrogate pair.
 */
function escapedHead(raw: string, room: Size): { escaped: string; kept: number } {
  let bytes = 0;
  let chars = 0;
  let end = 0;
  for (const ch of raw) {
    const piece = ESCAPES[ch] ?? ch;
    const next = { bytes: bytes + utf8Length(piece), chars: chars + piece.length };
    if (next.bytes > room.bytes || next.chars > room.chars) break;
    bytes = next.bytes;
    chars = next.chars;
    end += ch.length;
  }
  return { escaped: escapeXml(raw.slice(0, end)), kept: end };
}

function entryText(entry: Entry, body: string): string {
  return `<${entry.tag}>${body}</${entry.tag}>\n`;
}

function runOpen(run: TranscriptRun["run"]): string {
  return `<run ordinal="${run.ordinal}" kind="${run.kind}" status="${run.status}">\n`;
}

const RUN_CLOSE = "</run>\n";

interface Rendered {
  readonly text: string;
  readonly history: HandoffHistoryEntry[];
  readonly truncated: boolean;
}

function renderRun(run: TranscriptRun, entries: readonly Entry[]): Rendered {
  let text = runOpen(run.run);
  for (const entry of entries) text += entryText(entry, escapeXml(entry.text));
  const history = entries.flatMap((e) => (e.role === null ? [] : [{ runOrdinal: run.run.ordinal, role: e.role, text: e.text }]));
  return { text: text + RUN_CLOSE, history, truncated: false };
}

/** The newest run alone is too big: keep its newest entries, cutting the one that crosses the budget. */
function renderRunWithin(run: TranscriptRun, entries: readonly Entry[], room: Size): Rendered | null {
  const frame = sizeOf(runOpen(run.run) + RUN_CLOSE);
  if (!fits(frame, room)) return null;
  const left: Size = { bytes: room.bytes - frame.bytes, chars: room.chars - frame.chars };
  const kept: string[] = [];
  const history: HandoffHistoryEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    const whole = entryText(entry, escapeXml(entry.text));
    const size = sizeOf(whole);
    if (fits(size, left)) {
      kept.unshift(whole);
      if (entry.role !== null) history.unshift({ runOrdinal: run.run.ordinal, role: entry.role, text: entry.text });
      take(left, size);
      continue;
    }
    const marker = (cut: number) => `[… ${cut} characters cut]`;
    const overhead = sizeOf(entryText(entry, marker(entry.text.length)));
    if (fits(overhead, left)) {
      const head = escapedHead(entry.text, { bytes: left.bytes - overhead.bytes, chars: left.chars - overhead.chars });
      kept.unshift(entryText(entry, `${head.escaped}${marker(entry.text.length - head.kept)}`));
      if (entry.role !== null) history.unshift({ runOrdinal: run.run.ordinal, role: entry.role, text: entry.text.slice(0, head.kept) });
    }
    break;
  }
  return { text: runOpen(run.run) + kept.join("") + RUN_CLOSE, history, truncated: true };
}

function range(runs: readonly TranscriptRun[]): RunOrdinalRange | null {
  const first = runs[0];
  const last = runs[runs.length - 1];
  return first === undefined || last === undefined ? null : { from: first.run.ordinal, to: last.run.ordinal };
}

function rangeText(r: RunOrdinalRange): string {
  return r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`;
}

/** The <omitted> element: which runs were left out, whether text was cut, and where to read the rest. */
function omittedNote(omitted: { range: RunOrdinalRange; count: number } | null, truncated: boolean, budget: TranscriptBudget, readMore: string): string {
  const parts = [
    omitted === null ? null : omitted.count === 1 ? `Run ${rangeText(omitted.range)} was left out` : `Runs ${rangeText(omitted.range)} (${omitted.count} runs) were left out`,
    truncated ? `${omitted === null ? "Some" : "some"} text was cut` : null,
  ].filter((part) => part !== null);
  const runsAttribute = omitted === null ? "" : ` runs="${rangeText(omitted.range)}" count="${omitted.count}"`;
  return `<omitted${runsAttribute}>${parts.join(" and ")} to stay within ${budget.maxTokens} tokens and ${budget.maxBytes} bytes; read the full text with ${escapeXml(readMore)}.</omitted>\n`;
}

/** Build the transcript element within the budget, newest material first. */
export function buildTranscript(input: TranscriptInput): Transcript {
  const budget = input.budget ?? HANDOFF_BUDGET;
  const attributes = input.attributes.map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`).join("");
  const head = `<${input.tag}${attributes}>\n<instructions>${escapeXml(input.instructions)}</instructions>\n`;
  const foot = `</${input.tag}>`;
  // Room for the note is kept back, sized for the largest note, so adding it never breaks the budget.
  const worst = Number.MAX_SAFE_INTEGER;
  const reserve = sizeOf(omittedNote({ range: { from: worst, to: worst }, count: worst }, true, budget, input.readMore));
  const room: Size = { bytes: budget.maxBytes - reserve.bytes, chars: budget.maxTokens * 4 - reserve.chars };
  take(room, sizeOf(head + foot));
  let truncated = false;
  let summary = "";
  if (input.summary !== undefined) {
    const whole = `<summary>${escapeXml(input.summary)}</summary>\n`;
    if (fits(sizeOf(whole), room)) summary = whole;
    else {
      const frame = sizeOf("<summary></summary>\n[… 0000000 characters cut]");
      const kept = escapedHead(input.summary, { bytes: Math.max(0, room.bytes - frame.bytes), chars: Math.max(0, room.chars - frame.chars) });
      summary = `<summary>${kept.escaped}[… ${input.summary.length - kept.kept} characters cut]</summary>\n`;
      truncated = true;
    }
    take(room, sizeOf(summary));
  }
  const blocks: Rendered[] = [];
  for (let i = input.runs.length - 1; i >= 0; i--) {
    const run = input.runs[i]!;
    const entries = run.items.map(transcriptEntry).filter((entry): entry is Entry => entry !== null);
    const whole = renderRun(run, entries);
    const size = sizeOf(whole.text);
    if (fits(size, room)) {
      blocks.unshift(whole);
      take(room, size);
      continue;
    }
    if (blocks.length === 0) {
      const partial = renderRunWithin(run, entries, room);
      if (partial !== null) {
        blocks.unshift(partial);
        truncated = true;
      }
    }
    break;
  }
  const included = input.runs.slice(input.runs.length - blocks.length);
  const omitted = input.runs.slice(0, input.runs.length - blocks.length);
  const omittedRange = range(omitted);
  const note =
    omittedRange !== null || truncated ? omittedNote(omittedRange === null ? null : { range: omittedRange, count: omitted.length }, truncated, budget, input.readMore) : "";
  const text = head + summary + note + blocks.map((block) => block.text).join("") + foot;
  return {
    text,
    bytes: utf8Length(text),
    estimatedTokens: estimateTokens(text),
    covered: range(input.runs),
    included: range(included),
    omittedRuns: omitted.length,
    truncated,
    history: blocks.flatMap((block) => block.history),
  };
}

/** Group a thread's timeline by run, for the runs asked for (oldest first). One pass over the items. */
export function transcriptRuns(items: readonly (TurnItem | undefined)[], runs: readonly Pick<Run, "id" | "ordinal" | "kind" | "status">[]): TranscriptRun[] {
  const byRun = new Map<string, TurnItem[]>(runs.map((run) => [run.id, []]));
  for (const item of items) {
    if (item?.runId == null) continue;
    byRun.get(item.runId)?.push(item);
  }
  return runs.map((run) => ({ run, items: byRun.get(run.id)! }));
}
