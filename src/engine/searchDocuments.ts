import type { AppThread } from "../contracts/thread.js";
import type { TurnItem, TurnItemType } from "../contracts/turnItems.js";
import { type SearchDocument, SearchItemKind, type SearchThread } from "../store/search/searchIndex.js";

/**
 * What the search index holds of a turn item (pure). Bump
 * SEARCH_MAPPING_VERSION whenever a document's text or kind would come out
 * differently: a stored index of another version is rebuilt from the log.
 */
export const SEARCH_MAPPING_VERSION = "1";

/** Longest text one document keeps; the rest of a huge tool result is not searchable. */
export const MAX_DOCUMENT_CHARS = 20_000;

/** Which turn items are indexed, as which kind: one row per item type, checked total by the compiler. */
export const SEARCH_KIND_OF_ITEM: { readonly [T in TurnItemType]: SearchItemKind | null } = {
  notification: SearchItemKind.message,
  user_message: SearchItemKind.message,
  assistant_message: SearchItemKind.message,
  proposed_plan: SearchItemKind.message,
  dynamic_tool: SearchItemKind.toolCall,
  command_execution: SearchItemKind.command,
  file_change: SearchItemKind.fileChange,
  reasoning: null,
  todo_list: null,
  user_input_request: null,
  file_search: null,
  web_search: null,
  approval_request: null,
  checkpoint: null,
  run_interrupt_request: null,
  run_interrupt_result: null,
  system_notice: null,
  error: null,
  compaction: null,
  handoff: null,
  fork: null,
  thread_created: null,
  // A secret request's item names the secret, never its value; it is not searchable anyway.
  secret_request: null,
  subagent: null,
};

export function searchThread(thread: AppThread): SearchThread {
  return {
    threadId: thread.id,
    projectId: thread.projectId,
    title: thread.title,
    relation: thread.lineage.relation,
    archived: thread.archivedAt !== null,
    deleted: thread.deletedAt !== null,
  };
}

/** The document for an item, or null when its type is not indexed (or it has no text). */
export function searchDocument(item: TurnItem): SearchDocument | null {
  const kind = SEARCH_KIND_OF_ITEM[item.type];
  if (kind === null) return null;
  const text = bounded(documentText(item));
  if (text.trim() === "") return null;
  return { itemId: item.id, threadId: item.threadId, runId: item.runId, position: item.position, itemType: item.type, kind, createdAt: item.createdAt, text };
}

function documentText(item: TurnItem): string {
  switch (item.type) {
    case "user_message":
    case "assistant_message":
      return item.text;
    case "notification":
      return item.title === null ? item.text : `${item.title}\n${item.text}`;
    case "proposed_plan":
      return item.title === null ? item.markdown : `${item.title}\n${item.markdown}`;
    case "dynamic_tool":
      return [item.toolName, ...leaves(item.arguments), ...leaves(toolResultBody(item.result))].join("\n");
    case "command_execution":
      return `$ ${item.command}\n${item.outputPreview}`;
    case "file_change":
      return item.changes.map((change) => `${change.kind} ${change.path}${change.diff === null ? "" : `\n${change.diff}`}`).join("\n");
    default:
      return "";
  }
}

/**
 * A tool result as searchable values: an MCP CallToolResult's structured
 * content when it has one (its text blocks repeat it as JSON), else the
 * whole result.
 */
function toolResultBody(result: unknown): unknown {
  if (typeof result === "object" && result !== null && "structuredContent" in result) {
    const structured = (result as { structuredContent?: unknown }).structuredContent;
    if (structured !== undefined && structured !== null) return structured;
  }
  return result;
}

/** The string, number and boolean values of a JSON value (not its keys), depth first. */
function leaves(value: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 32) return out;
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
  else if (Array.isArray(value)) for (const entry of value) leaves(entry, out, depth + 1);
  else if (typeof value === "object" && value !== null) for (const entry of Object.values(value)) leaves(entry, out, depth + 1);
  return out;
}

/** At most MAX_DOCUMENT_CHARS, without NUL characters (PostgreSQL text cannot hold them). */
function bounded(text: string): string {
  const head = text.length <= MAX_DOCUMENT_CHARS ? text : text.slice(0, MAX_DOCUMENT_CHARS);
  return head.includes("\u0000") ? head.replaceAll("\u0000", " ") : head;
}
