import { type ReactNode, useEffect, useState } from "react";
import type { BudgetSpend } from "../../src/contracts/entities/budgets.js";
import type { WorkflowOutput } from "../../src/contracts/tools/workflowTools.js";
import type { TurnItemOf } from "../../src/contracts/turnItems.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { callApi, errorText } from "./api.js";
import { statusWords } from "./statusWords.js";

type Step = WorkflowOutput["steps"][number] & {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly spend: Pick<BudgetSpend, "tokens" | "turns" | "costUsd"> | null;
};

/** `GET /api/ui/workflows/:workflowId` (src/app/workflows/uiPanel.ts): t3_workflow_status's record with the description, times and spend. */
type WorkflowRead = Omit<WorkflowOutput, "steps"> & {
  readonly description: string | null;
  readonly createdAt: string;
  readonly endedAt: string | null;
  readonly steps: readonly Step[];
};

type PhaseStatus = WorkflowOutput["phases"][number]["status"];

/** How a phase's progress reads: a table the compiler checks is total ("pending" here is not "waiting for you"). */
const PHASE_WORDS: { readonly [S in PhaseStatus]: string } = { pending: "not started", active: "in progress", done: "done" };

/** Why a workflow that is not running offers no Stop. */
const NO_STOP: { readonly [S in Exclude<WorkflowOutput["status"], "running">]: (read: WorkflowRead) => string } = {
  completed: () => "it already finished",
  failed: (read) => `it already failed${read.error === null ? "" : ` (${read.error.code})`}`,
  stopped: (read) => `it was stopped${read.stopReason === null ? "" : `: ${read.stopReason}`}`,
};

/** What the parent's `t3_workflow` item carries (src/core/workflows/workflows.ts, workflowItemResult). */
interface ItemResult {
  readonly workflowId?: string;
  readonly name?: string | null;
  readonly status?: WorkflowOutput["status"];
}

export interface WorkflowPanelProps {
  readonly item: TurnItemOf<"dynamic_tool">;
  readonly threads: ReadonlyMap<string, ThreadShell>;
  readonly stopWorkflow: (workflowId: string) => Promise<unknown>;
  readonly link: (threadId: string, children: ReactNode) => ReactNode;
}

/**
 * A workflow on its parent thread's timeline, in place of its `t3_workflow`
 * item's JSON: the meta's name and description, the phases' progress, each
 * agent() step (label, phase, provider, status, elapsed time, spend, result
 * or error, a link to its child thread), and Stop (or why it is not offered).
 * The item is updated on every journaled step and phase, and the children's
 * rows whenever their runs change: each change re-reads the panel's route.
 */
export function WorkflowPanel({ item, threads, stopWorkflow, link }: WorkflowPanelProps) {
  const fromItem = (item.result ?? {}) as ItemResult;
  const workflowId = fromItem.workflowId ?? (item.arguments as { workflowId?: string } | null)?.workflowId ?? null;
  const [read, setRead] = useState<WorkflowRead | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [stopping, setStopping] = useState(false);
  const [stopError, setStopError] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const version = `${item.updatedAt}|${(read?.steps ?? []).map((step) => childVersion(threads, step.childThreadId)).join(",")}|${reload}`;
  useEffect(() => {
    if (workflowId === null) return;
    let live = true;
    callApi<WorkflowRead>("GET", `/api/ui/workflows/${encodeURIComponent(workflowId)}`).then(
      (out) => {
        if (!live) return;
        setRead(out);
        setError(null);
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [workflowId, version]);
  const running = (read?.status ?? fromItem.status) === "running";
  const now = useNow(running);

  const status = read?.status ?? fromItem.status ?? "running";
  const name = read?.name ?? fromItem.name ?? workflowId ?? "workflow";
  const stop = () => {
    if (workflowId === null) return;
    setStopping(true);
    setStopError(null);
    stopWorkflow(workflowId).then(
      () => {
        setStopping(false);
        setReload((n) => n + 1);
      },
      (e: unknown) => {
        setStopping(false);
        setStopError(errorText(e));
      },
    );
  };
  return (
    <div className="item item-workflow" data-kind="workflow" data-workflow-id={workflowId ?? ""} data-status={status}>
      <div className="item-head">
        <span className="item-title">Workflow: {name}</span>
        <span className={`pill pill-${status}`}>{statusWords(status)}</span>
      </div>
      <div className="item-body">
        {read?.description ? <p className="workflow-description">{read.description}</p> : null}
        {error !== null ? <div className="error-text">Could not read the workflow: {error}</div> : null}
        {read === null ? (
          error === null ? <div className="muted">Loading…</div> : null
        ) : (
          <>
            <div className="muted small workflow-summary">
              {stepCountText(read.steps)} · {running ? "running for" : "ran"} {elapsed(read.createdAt, read.endedAt, now)}
              {read.budget === undefined ? null : <> · pool spent {read.budget.spent.tokens.toLocaleString("en-US")} tokens{read.budget.paused ? " (paused on budget)" : ""}</>}
            </div>
            {read.phases.length > 0 ? <Phases read={read} /> : null}
            <ol className="workflow-steps" aria-label="Steps">
              {read.steps.map((step) => (
                <StepRow key={step.index} step={step} now={now} link={link} threads={threads} />
              ))}
            </ol>
            {read.steps.length === 0 ? <div className="muted small">No agent() call yet.</div> : null}
            {read.error !== null ? <div className="error-text workflow-error">{read.error.code}: {read.error.message}</div> : null}
            {read.result !== undefined ? <ResultView label="Result" value={read.result} /> : null}
          </>
        )}
        <div className="actions">
          {running ? (
            <button type="button" className="danger" disabled={stopping || workflowId === null} onClick={stop} title="Stop the workflow and the agents it is running (t3_workflow_stop)">
              {stopping ? "Stopping…" : "Stop workflow"}
            </button>
          ) : read !== null && read.status !== "running" ? (
            <span className="muted small no-stop">Stop is not offered: {NO_STOP[read.status](read)}.</span>
          ) : null}
          {stopError !== null ? <span className="error-text">{stopError}</span> : null}
        </div>
      </div>
    </div>
  );
}

function Phases({ read }: { readonly read: WorkflowRead }) {
  return (
    <ol className="workflow-phases" aria-label="Phases">
      {read.phases.map((phase) => {
        const steps = read.steps.filter((step) => step.phase === phase.title);
        const finished = steps.filter((step) => step.status !== "running").length;
        return (
          <li key={phase.title} className={`workflow-phase phase-${phase.status}`} data-phase={phase.title} data-status={phase.status} title={phase.detail}>
            <span className="phase-mark" aria-hidden="true">{phase.status === "done" ? "●" : phase.status === "active" ? "◐" : "○"}</span>
            <span className="phase-title">{phase.title}</span>
            <span className="phase-status">{PHASE_WORDS[phase.status]}</span>
            {steps.length > 0 ? <span className="muted small">{finished}/{steps.length}</span> : null}
          </li>
        );
      })}
    </ol>
  );
}

function StepRow({ step, now, link, threads }: { readonly step: Step; readonly now: number; readonly link: WorkflowPanelProps["link"]; readonly threads: ReadonlyMap<string, ThreadShell> }) {
  const child = step.childThreadId === null ? undefined : threads.get(step.childThreadId);
  return (
    <li className="workflow-step" data-step={step.index} data-status={step.status}>
      <div className="workflow-step-head">
        <span className="step-label">{step.label ?? `agent() #${step.index}`}</span>
        {step.phase === null ? null : <span className="muted small step-phase">{step.phase}</span>}
        <span className="spacer" />
        {step.providerInstanceId === null ? null : <span className="pill step-provider" title="provider instance">{step.providerInstanceId}</span>}
        <span className={`pill pill-${step.status}`}>{statusWords(step.status)}</span>
      </div>
      <div className="muted small step-meta">
        <span className="step-elapsed">{elapsed(step.startedAt, step.endedAt, now)}</span>
        {step.spend === null ? null : <span className="step-spend"> · {spendText(step.spend)}</span>}
        {step.resumedFrom === undefined ? null : <span> · answered from an earlier workflow</span>}
        {step.childThreadId === null ? null : <span> · {link(step.childThreadId, <>Open {child?.title ? `“${child.title}”` : "the child thread"} →</>)}</span>}
      </div>
      {step.error !== null ? <div className="error-text step-error">{step.error.code}: {step.error.message}</div> : null}
      {step.result !== undefined ? <ResultView label="Result" value={step.result} /> : null}
    </li>
  );
}

/** A schema result as JSON, a text answer as text; a long one folded. */
function ResultView({ label, value }: { readonly label: string; readonly value: unknown }) {
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
  const body = <pre className="code workflow-result">{text}</pre>;
  if (text.length <= 400 && text.split("\n").length <= 8) return body;
  return (
    <details className="collapsed">
      <summary>{label} ({text.length.toLocaleString("en-US")} characters)</summary>
      {body}
    </details>
  );
}

function childVersion(threads: ReadonlyMap<string, ThreadShell>, threadId: string | null): string {
  const row = threadId === null ? undefined : threads.get(threadId);
  return row === undefined ? "" : `${row.runStatus ?? ""}@${row.updatedAt}`;
}

/** The current time, ticking each second while `ticking` (a running workflow's elapsed times move). */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}

function elapsed(from: string, to: string | null, now: number): string {
  const ms = Math.max(0, (to === null ? now : Date.parse(to)) - Date.parse(from));
  if (ms < 1_000) return "under 1 s";
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

function spendText(spend: NonNullable<Step["spend"]>): string {
  const parts = [`${spend.tokens.toLocaleString("en-US")} tokens`];
  if (spend.costUsd > 0) parts.push(`$${spend.costUsd.toFixed(spend.costUsd < 0.01 ? 4 : 2)}`);
  parts.push(`${spend.turns} turn${spend.turns === 1 ? "" : "s"}`);
  return parts.join(", ");
}

function stepCountText(steps: readonly Step[]): string {
  if (steps.length === 0) return "no steps yet";
  const count = (status: Step["status"]) => steps.filter((step) => step.status === status).length;
  const parts = [`${steps.length} step${steps.length === 1 ? "" : "s"}`];
  for (const status of ["running", "completed", "failed"] as const) if (count(status) > 0) parts.push(`${count(status)} ${statusWords(status)}`);
  return parts.join(", ");
}

/** What the agent's workflow tool calls did, in words. */
const WORKFLOW_CALLS: { readonly [name: string]: string | undefined } = {
  t3_workflow_start: "Started the workflow",
  t3_workflow_status: "Read the workflow",
  t3_workflow_stop: "Stopped the workflow",
};

/**
 * The agent's own t3_workflow_start / status / stop call, as one line naming
 * the workflow (its panel is the workflow's item); the call's JSON folded
 * under it. Null for any other tool, and for a call that answered no workflow
 * (a refusal, a dry run's estimate): those keep the generic tool card.
 */
export function WorkflowToolCall({ item }: { readonly item: TurnItemOf<"dynamic_tool"> }): ReactNode {
  const verb = WORKFLOW_CALLS[item.toolName];
  const answer = (item.result as { structuredContent?: { workflowId?: unknown; name?: unknown } } | null)?.structuredContent;
  if (verb === undefined || typeof answer?.workflowId !== "string") return null;
  return (
    <div className="item item-dynamic_tool workflow-call" data-kind="dynamic_tool" data-tool={item.toolName}>
      <details className="collapsed">
        <summary>
          {verb} {typeof answer.name === "string" ? `“${answer.name}”` : answer.workflowId}
          {" · "}
          <code>{item.toolName}</code>
        </summary>
        <pre className="code">{JSON.stringify({ arguments: item.arguments, result: item.result }, null, 2)}</pre>
      </details>
    </div>
  );
}
