import { useState, type ReactNode } from "react";
import { TaskDoneCard } from "./taskNotice.js";
import type { CheckpointStatus } from "../../src/contracts/entities/checkpoints.js";
import type { TurnItem, TurnItemOf, TurnItemType } from "../../src/contracts/turnItems.js";
import type { RunInterruptOutcome, UserInputAnswers } from "../../src/contracts/turnItemParts.js";
import { CommandOutput } from "./commandOutput.js";
import { statusWords } from "./statusWords.js";
import { DiffView } from "./diffView.js";
import { Markdown } from "./markdown.js";
import type { RollbackTarget } from "./rollbackDialog.js";
import type { LiveOutput } from "./threadStore.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { WorkflowPanel, WorkflowToolCall } from "./workflowPanel.js";

/** What an item view may use besides its item. */
export interface ItemContext {
  readonly deltas: ReadonlyMap<string, string>;
  /** Live command output, by output stream id. */
  readonly outputs: ReadonlyMap<string, LiveOutput>;
  openThread(threadId: string): void;
  respond(requestId: string, response: { decision: "accept" | "decline" } | { answers: UserInputAnswers }): Promise<void>;
  /** Open the diff of one turn (its run). */
  showTurnDiff(runId: string, label: string): void;
  /** Ask to roll the workspace back to a checkpoint (a confirmation first). */
  askRollback(target: RollbackTarget): void;
  /** The pending approval that `a` / `d` answer (the thread's first), if any. */
  readonly keyTarget: string | null;
  /** The thread list's rows: a workflow panel follows its children's. */
  readonly threads: ReadonlyMap<string, ThreadShell>;
  /** Stop a workflow (`orchestration.stopWorkflow`, as t3_workflow_stop). */
  readonly stopWorkflow: (workflowId: string) => Promise<unknown>;
}

/** Why a checkpoint that is not ready offers no rollback: a table the compiler checks is total. */
const NOT_RESTORABLE: { readonly [S in Exclude<CheckpointStatus, "ready">]: string } = {
  stale: "a rollback to an earlier checkpoint superseded it",
  missing: "nothing was saved to restore (a folder outside git, a worktree not made yet, or its saved state removed)",
  error: "capturing it failed",
};

/** Whether a checkpoint holds saved state, so its turn's diff can be shown (a stale one still does). */
const HAS_SAVED_STATE: { readonly [S in CheckpointStatus]: boolean } = { ready: true, stale: true, missing: false, error: false };

/** How an interrupt request ended, as a run_interrupt_result card says it. */
const INTERRUPT_OUTCOME: { readonly [O in RunInterruptOutcome]: string } = {
  interrupted: "Interrupted",
  already_terminal: "Interrupt too late",
  failed: "Interrupt failed",
};

type ItemView<T extends TurnItemType> = (props: { readonly item: TurnItemOf<T>; readonly ctx: ItemContext }) => ReactNode;

function Card({ kind, title, status, children, className }: { kind: string; title: ReactNode; status?: string | null; children?: ReactNode; className?: string }) {
  return (
    <div className={`item item-${kind} ${className ?? ""}`} data-kind={kind}>
      <div className="item-head">
        <span className="item-title">{title}</span>
        {status ? <span className={`pill pill-${status}`}>{statusWords(status)}</span> : null}
      </div>
      {children === undefined ? null : <div className="item-body">{children}</div>}
    </div>
  );
}

function Collapsed({ label, children }: { label: string; children: ReactNode }) {
  return (
    <details className="collapsed">
      <summary>{label}</summary>
      {children}
    </details>
  );
}

function ApprovalView({ item, ctx }: { item: TurnItemOf<"approval_request">; ctx: ItemContext }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const decide = (decision: "accept" | "decline") => {
    setBusy(true);
    ctx.respond(item.requestId, { decision }).then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(e instanceof Error ? e.message : String(e));
      },
    );
  };
  return (
    <Card kind="approval_request" title={<>Approval: {item.title}</>} status={item.decision ?? item.status} className={item.status === "pending" ? `needs-you${ctx.keyTarget === item.id ? " key-target" : ""}` : ""}>
      <div className="muted">
        {item.requestKind}
        {ctx.keyTarget === item.id ? <span className="key-hint"> · keys: <kbd>a</kbd> approve, <kbd>d</kbd> decline</span> : null}
      </div>
      {item.detail ? <pre className="code">{item.detail}</pre> : null}
      {item.status === "pending" ? (
        <div className="actions">
          <button className="primary" disabled={busy} onClick={() => decide("accept")}>
            Approve
          </button>
          <button className="danger" disabled={busy} onClick={() => decide("decline")}>
            Decline
          </button>
        </div>
      ) : null}
      {error ? <div className="error-text">{error}</div> : null}
    </Card>
  );
}

function QuestionView({ item, ctx }: { item: TurnItemOf<"user_input_request">; ctx: ItemContext }) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    const payload: UserInputAnswers = Object.fromEntries(item.questions.map((q) => [q.id, [answers[q.id] ?? ""]]));
    ctx.respond(item.requestId, { answers: payload }).then(
      () => setBusy(false),
      (e: unknown) => {
        setBusy(false);
        setError(e instanceof Error ? e.message : String(e));
      },
    );
  };
  const pending = item.status === "pending";
  return (
    <Card kind="user_input_request" title="Question" status={item.status} className={pending ? "needs-you" : ""}>
      <form onSubmit={submit} className="question-form">
        {item.questions.map((q) => (
          <label key={q.id} className="question">
            <span>{q.header ? <strong>{q.header}: </strong> : null}{q.question}</span>
            {q.options.length > 0 ? (
              <span className="options">
                {q.options.map((o) => (
                  <button type="button" key={o.label} disabled={!pending} className={answers[q.id] === o.label ? "chosen" : ""} onClick={() => setAnswers({ ...answers, [q.id]: o.label })} title={o.description ?? undefined}>
                    {o.label}
                  </button>
                ))}
              </span>
            ) : null}
            {pending ? (
              <input aria-label={`answer ${q.id}`} value={answers[q.id] ?? ""} onChange={(e) => setAnswers({ ...answers, [q.id]: e.target.value })} placeholder="Your answer" />
            ) : (
              <span className="answer">{item.answers?.[q.id]?.join(", ") ?? "—"}</span>
            )}
          </label>
        ))}
        {pending ? (
          <button type="submit" className="primary" disabled={busy || item.questions.some((q) => (answers[q.id] ?? "").trim() === "")}>
            Answer
          </button>
        ) : null}
        {error ? <div className="error-text">{error}</div> : null}
      </form>
    </Card>
  );
}

function CommandView({ item, ctx }: { item: TurnItemOf<"command_execution">; ctx: ItemContext }) {
  const live = item.outputStreamId === null ? undefined : ctx.outputs.get(item.outputStreamId);
  const text = live !== undefined && live.text.length >= item.outputPreview.length ? live.text : item.outputPreview;
  return (
    <Card kind="command_execution" title={<code>$ {item.command}</code>} status={item.status}>
      <CommandOutput text={text} />
      <div className="muted">
        {item.exitCode === null ? "" : `exit ${item.exitCode}`}
        {item.durationMs === null ? "" : ` · ${(item.durationMs / 1000).toFixed(1)} s`}
        {item.outputTruncated ? " · output truncated" : ""}
        {item.cwd ? ` · ${item.cwd}` : ""}
      </div>
    </Card>
  );
}

function Link({ threadId, ctx, children }: { threadId: string; ctx: ItemContext; children: ReactNode }) {
  return (
    <a
      href={`/t/${encodeURIComponent(threadId)}`}
      onClick={(e) => {
        e.preventDefault();
        ctx.openThread(threadId);
      }}
    >
      {children}
    </a>
  );
}

/** The tool name of a workflow's own item on its parent's timeline (src/core/workflows/workflows.ts). */
const WORKFLOW_TOOL_NAME = "t3_workflow";

/** One view per turn item type (spec 004 §2.1): the compiler checks the table is total. */
const ITEM_VIEWS: { readonly [T in TurnItemType]: ItemView<T> } = {
  notification: ({ item, ctx }) =>
    TaskDoneCard({ item, link: (children) => (item.sourceThreadId ? <Link threadId={item.sourceThreadId} ctx={ctx}>{children}</Link> : children) }) ?? (
      <Card kind="notification" title={item.title ?? "Notification"} status={item.delivery ?? null}>
        <Markdown text={item.text} />
        {item.sourceThreadId ? <Link threadId={item.sourceThreadId} ctx={ctx}>open the thread it is about</Link> : null}
      </Card>
    ),
  user_message: ({ item }) => (
    <div className="item item-user_message bubble user" data-kind="user_message" data-created-by={item.createdBy}>
      {item.createdBy === "user" ? null : <div className="bubble-author">{item.createdBy === "agent" ? "from an agent" : "from Loom"}</div>}
      <Markdown text={item.text} />
    </div>
  ),
  assistant_message: ({ item, ctx }) => (
    <div className="item item-assistant_message bubble assistant" data-kind="assistant_message">
      <Markdown text={item.text + (ctx.deltas.get(item.id) ?? "")} />
      {item.streaming ? <span className="cursor" aria-label="streaming" /> : null}
    </div>
  ),
  reasoning: ({ item }) => (
    <div className="item item-reasoning" data-kind="reasoning">
      <Collapsed label={`Reasoning${item.summary ? `: ${item.summary.slice(0, 80)}` : ""}`}>
        {item.text ? <Markdown text={item.text} /> : <span className="muted">{item.encryptedContentPresent ? "encrypted by the provider" : "no text"}</span>}
      </Collapsed>
    </div>
  ),
  proposed_plan: ({ item }) => (
    <Card kind="proposed_plan" title={item.title ?? "Plan"}>
      <Markdown text={item.markdown} />
      <ol className="steps">
        {item.steps.map((step, i) => (
          <li key={i} className={`step-${step.status}`}>
            {step.text}
          </li>
        ))}
      </ol>
    </Card>
  ),
  todo_list: ({ item }) => (
    <Card kind="todo_list" title="To do">
      <ul className="todos">
        {item.items.map((todo) => (
          <li key={todo.id} className={`todo-${todo.status}`}>
            <span className="check">{todo.status === "completed" ? "☑" : todo.status === "in_progress" ? "◐" : "☐"}</span> {todo.content}
          </li>
        ))}
      </ul>
    </Card>
  ),
  user_input_request: ({ item, ctx }) => <QuestionView item={item} ctx={ctx} />,
  file_change: ({ item }) => (
    <Card kind="file_change" title={`Changed ${item.changes.length} file${item.changes.length === 1 ? "" : "s"}`} status={item.status}>
      {item.changes.map((change) => (
        <div key={change.path} className="file-change">
          <div>
            <code>{change.path}</code> <span className="muted">{change.kind}</span> <span className="add">+{change.additions}</span> <span className="del">−{change.deletions}</span>
          </div>
          {change.diff ? <DiffView diff={change.diff} path={change.path} /> : null}
        </div>
      ))}
    </Card>
  ),
  command_execution: ({ item, ctx }) => <CommandView item={item} ctx={ctx} />,
  file_search: ({ item }) => (
    <Card kind="file_search" title={<>File search: <code>{item.query}</code></>}>
      <ul>
        {item.matches.map((m, i) => (
          <li key={i}>
            <code>
              {m.path}
              {m.line === null ? "" : `:${m.line}`}
            </code>{" "}
            {m.preview}
          </li>
        ))}
      </ul>
      {item.truncated ? <div className="muted">more matches not shown</div> : null}
    </Card>
  ),
  web_search: ({ item }) => (
    <Card kind="web_search" title={<>Web {item.action.replaceAll("_", " ")}: {item.query}</>}>
      <ul>
        {item.results.map((r, i) => (
          <li key={i}>
            <a href={r.url} target="_blank" rel="noreferrer noopener">
              {r.title}
            </a>
            {r.snippet ? <div className="muted">{r.snippet}</div> : null}
          </li>
        ))}
      </ul>
    </Card>
  ),
  approval_request: ({ item, ctx }) => <ApprovalView item={item} ctx={ctx} />,
  checkpoint: ({ item, ctx }) => {
    const label = `the checkpoint after run ${item.appRunOrdinal}`;
    const runId = item.runId;
    // A turn that changed no file gets one quiet line, its rollback folded inside: cards are for turns that changed something.
    if (item.files.length === 0 && !item.filesOmitted && item.status !== "error") {
      return (
        <details className="item item-checkpoint checkpoint-quiet" data-kind="checkpoint">
          <summary className="muted">Checkpoint after run {item.appRunOrdinal}: no files changed</summary>
          <div className="actions">
            {item.status === "ready" ? (
              <button type="button" title="Restore the workspace to this checkpoint" onClick={() => ctx.askRollback({ checkpointId: item.checkpointId, label, files: [] })}>
                Roll back…
              </button>
            ) : (
              <span className="muted not-restorable">Cannot roll back: {NOT_RESTORABLE[item.status]}</span>
            )}
          </div>
        </details>
      );
    }
    return (
      <Card kind="checkpoint" title={`Checkpoint after run ${item.appRunOrdinal}`} status={item.status}>
        {item.filesOmitted ? null : (
          <ul>
            {item.files.map((f) => (
              <li key={f.path}>
                <code>{f.path}</code> <span className="add">+{f.additions}</span> <span className="del">−{f.deletions}</span>
              </li>
            ))}
          </ul>
        )}
        <div className="actions">
          {runId !== null && HAS_SAVED_STATE[item.status] ? (
            <button type="button" onClick={() => ctx.showTurnDiff(runId, `Changes of run ${item.appRunOrdinal}`)}>
              Show diff
            </button>
          ) : null}
          {item.status === "ready" ? (
            <button type="button" className="danger" title="Restore the workspace to this checkpoint" onClick={() => ctx.askRollback({ checkpointId: item.checkpointId, label, files: item.files.map((f) => f.path) })}>
              Roll back…
            </button>
          ) : (
            <span className="muted not-restorable">Cannot roll back: {NOT_RESTORABLE[item.status]}</span>
          )}
        </div>
      </Card>
    );
  },
  run_interrupt_request: ({ item }) => <Card kind="run_interrupt_request" title={`Interrupt requested by ${item.requestedBy}${item.reason ? `: ${item.reason}` : ""}`} />,
  run_interrupt_result: ({ item }) => <Card kind="run_interrupt_result" title={`${INTERRUPT_OUTCOME[item.outcome]}${item.message ? `: ${item.message}` : ""}`} status={item.outcome} />,
  system_notice: ({ item }) => <div className={`item item-system_notice notice-${item.level}`} data-kind="system_notice">{item.text}</div>,
  error: ({ item }) => (
    <Card kind="error" title={<>Error{item.code ? ` (${item.code})` : ""}</>} className="error-card">
      <div>{item.message}</div>
      {item.detail ? <pre className="code">{item.detail}</pre> : null}
    </Card>
  ),
  compaction: ({ item }) => (
    <Card kind="compaction" title={`Context compacted (${item.trigger}, ${item.direction.replaceAll("_", " ")})`}>
      {item.tokensBefore !== null ? <span className="muted">{item.tokensBefore} → {item.tokensAfter ?? "?"} tokens</span> : null}
      {item.summary ? <Collapsed label="Summary"><Markdown text={item.summary} /></Collapsed> : null}
    </Card>
  ),
  handoff: ({ item }) => <Card kind="handoff" title={`Handoff ${item.fromProvider ?? "(none)"} → ${item.toProvider} (${item.strategy})`} status={item.status} />,
  fork: ({ item, ctx }) => (
    <Card kind="fork" title="Fork">
      <Link threadId={item.targetThreadId} ctx={ctx}>open the fork</Link> · <Link threadId={item.sourceThreadId} ctx={ctx}>its source</Link>
      {item.sourceRunOrdinal === null ? null : <span className="muted"> (through run {item.sourceRunOrdinal})</span>}
    </Card>
  ),
  thread_created: ({ item, ctx }) => (
    <Card kind="thread_created" title={<>New {item.relation} thread: <Link threadId={item.childThreadId} ctx={ctx}>{item.title}</Link></>} />
  ),
  secret_request: ({ item }) => (
    <Card kind="secret_request" title={<>Secret requested: <code>{item.secretName}</code> as <code>{item.envVarName}</code></>} status={item.status}>
      {item.description ? <div>{item.description}</div> : null}
      {item.status === "pending" ? <div className="muted">Provide it with t3_secret_provide or the secrets API; it never enters the log.</div> : null}
    </Card>
  ),
  subagent: ({ item, ctx }) => (
    <Card kind="subagent" title={<>Subagent{item.agentLabel ? `: ${item.agentLabel}` : ""}</>} status={item.status} className="subagent-card">
      {item.promptOmitted ? null : <Collapsed label={`Task: ${item.prompt.slice(0, 100)}`}><Markdown text={item.prompt} /></Collapsed>}
      {item.result !== null && item.resultOmitted !== true ? (
        <div className="result">
          <Markdown text={item.result} />
        </div>
      ) : null}
      {item.childThreadId ? <Link threadId={item.childThreadId} ctx={ctx}>Open the child thread →</Link> : null}
    </Card>
  ),
  dynamic_tool: ({ item, ctx }) =>
    item.toolName === WORKFLOW_TOOL_NAME ? (
      <WorkflowPanel item={item} threads={ctx.threads} stopWorkflow={ctx.stopWorkflow} link={(threadId, children) => <Link threadId={threadId} ctx={ctx}>{children}</Link>} />
    ) : (
      WorkflowToolCall({ item }) ?? <ToolCallCard item={item} />
    ),
};

function ToolCallCard({ item }: { readonly item: TurnItemOf<"dynamic_tool"> }) {
  return (
    <Card kind="dynamic_tool" title={<>Tool <code>{item.toolName}</code></>} status={item.status}>
      <Collapsed label="Arguments and result">
        <pre className="code">{JSON.stringify({ arguments: item.arguments, result: item.result }, null, 2)}</pre>
      </Collapsed>
    </Card>
  );
}

/** Render any item; a type this UI does not know (a newer server) shows collapsed and raw, never as an error. */
export function TimelineItem({ item, ctx }: { readonly item: TurnItem; readonly ctx: ItemContext }) {
  const view = (ITEM_VIEWS as Record<string, ItemView<TurnItemType> | undefined>)[item.type];
  if (view === undefined) {
    return (
      <div className="item item-unknown" data-kind="unknown">
        <Collapsed label={`Unknown item: ${String(item.type)}`}>
          <pre className="code">{JSON.stringify(item, null, 2)}</pre>
        </Collapsed>
      </div>
    );
  }
  return view({ item, ctx });
}
