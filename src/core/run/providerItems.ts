import type { ProviderItem } from "../../contracts/providerEvents.js";
import type { TurnItemBody } from "./changes.js";

/** Map the provider's file-change kinds onto the timeline's. */
const FILE_CHANGE_KIND = { add: "added", update: "modified", delete: "deleted" } as const;

/**
 * A normalized provider item as a turn item body. Requests (approvals,
 * questions) get Loom's runtime request id, not the provider's; `messageId`
 * names an assistant message (derived from the provider item, so stable).
 */
export function turnItemBody(item: ProviderItem, messageId: () => string, requestId: string | null, outputStreamId: () => string = () => "", planId: () => string = () => ""): TurnItemBody {
  switch (item.kind) {
    case "assistant_message":
      return { type: "assistant_message", messageId: messageId(), text: item.text, streaming: false, createdBy: "agent", creationSource: "provider" };
    case "reasoning":
      return { type: "reasoning", summary: null, text: item.text, encryptedContentPresent: false };
    case "command_execution":
      return {
        type: "command_execution",
        command: item.command,
        cwd: item.cwd,
        status: item.exitCode === 0 ? "completed" : "failed",
        exitCode: item.exitCode,
        durationMs: item.durationMs === null ? null : Math.max(0, Math.round(item.durationMs)),
        outputPreview: item.outputPreview,
        outputTruncated: item.outputTruncated,
        outputStreamId: outputStreamId() || null,
      };
    case "file_change":
      return {
        type: "file_change",
        status: "completed",
        changes: item.changes.map((change) => ({ path: change.path, kind: FILE_CHANGE_KIND[change.kind], diff: null, additions: change.additions, deletions: change.deletions })),
      };
    case "todo_list":
      return { type: "todo_list", items: item.items.map((todo, index) => ({ id: `todo-${index + 1}`, content: todo.text, status: todo.status })) };
    case "user_input_request":
      return {
        type: "user_input_request",
        requestId: requestId!,
        questions: item.questions.map((q) => ({ id: q.id, header: null, question: q.question, options: [], multiSelect: false })),
        status: "pending",
        answers: null,
      };
    case "approval_request":
      return { type: "approval_request", requestId: requestId!, requestKind: item.requestKind, title: item.title, detail: item.detail, status: "pending", decision: null };
    case "error":
      return { type: "error", code: null, message: item.message, detail: null };
    case "dynamic_tool":
      return { type: "dynamic_tool", toolName: item.toolName, arguments: item.arguments, result: item.result, status: item.status };
    case "system_notice":
      return { type: "system_notice", level: item.level, text: item.text };
    case "proposed_plan":
      return { type: "proposed_plan", planId: planId(), title: item.title, markdown: item.markdown, steps: item.steps.map((step) => ({ text: step.text, status: step.status })) };
    case "file_search":
      return { type: "file_search", query: item.query, matches: item.matches.map((m) => ({ path: m.path, line: m.line, preview: m.preview })), truncated: item.truncated };
    case "web_search":
      return { type: "web_search", query: item.query, action: item.action, results: item.results.map((r) => ({ title: r.title, url: r.url, snippet: r.snippet })) };
    case "compaction":
      return { type: "compaction", trigger: item.trigger, direction: "provider_native", tokensBefore: item.tokensBefore, tokensAfter: item.tokensAfter, summary: item.summary };
    default: {
      const exhaustive: never = item;
      return exhaustive;
    }
  }
}
