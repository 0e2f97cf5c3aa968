import type { ReactNode } from "react";
import type { TurnItemOf } from "../../src/contracts/turnItems.js";
import { Markdown } from "./markdown.js";
import { statusWords } from "./statusWords.js";

/**
 * A delegated task's completion notice, read for a person: the task's title,
 * its status in people's words, its result and a link to the child. The
 * notice's text is written for the parent's agent (ids, the tools to use
 * next; src/core/delegation/notices.ts), so it stays folded away under
 * "What the agent was told". Null for any other notification, and for a
 * completion notice whose text does not have the shape Loom writes.
 */
export function TaskDoneCard({ item, link }: { item: TurnItemOf<"notification">; link: (children: ReactNode) => ReactNode }): ReactNode {
  const parsed = item.taskId != null && item.requestId == null ? completionOf(item) : null;
  if (parsed === null) return null;
  return (
    <div className="item item-notification task-done" data-kind="notification" data-task-done="true">
      <div className="item-head">
        <span className="item-title">Task done: {parsed.title}</span>
        <span className={`pill pill-${parsed.status}`}>{statusWords(parsed.status)}</span>
      </div>
      <div className="item-body">
        {parsed.result === null ? <p className="muted">No result text.</p> : <Markdown text={parsed.result} />}
        {item.sourceThreadId ? <p className="small">{link("Open the child thread →")}</p> : null}
        <details className="collapsed agent-text">
          <summary>What the agent was told</summary>
          <pre className="output">{item.text}</pre>
        </details>
      </div>
    </div>
  );
}

const TITLE = /^Task "(.*)" finished: ([a-z_]+)$/s;
const RESULT = /\nResult:\n([\s\S]*?)\n\nUse task_status/;

function completionOf(item: TurnItemOf<"notification">): { title: string; status: string; result: string | null } | null {
  const title = TITLE.exec(item.title ?? "");
  if (title === null) return null;
  const result = RESULT.exec(item.text)?.[1] ?? null;
  return { title: title[1]!, status: title[2]!, result: result === "(no result text)" ? null : result };
}
