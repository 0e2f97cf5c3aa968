import { useEffect, useState } from "react";
import type { BudgetKind } from "../../src/contracts/entities/budgets.js";
import type { DelegateTaskResult } from "../../src/contracts/tools/toolOutputs.js";
import { callApi, errorText } from "./api.js";

type Budget = NonNullable<DelegateTaskResult["budget"]>;

/** How each budget kind reads, and how a typed amount becomes the limit's unit: a table the compiler checks is total. */
const KIND_LABEL: { readonly [K in BudgetKind]: { readonly label: string; readonly show: (n: number) => string; readonly unit: string; readonly toLimit: (typed: number) => number; readonly fromLimit: (n: number) => number } } = {
  tokens: { label: "tokens", show: (n) => n.toLocaleString("en-US"), unit: "tokens", toLimit: Math.round, fromLimit: (n) => n },
  turns: { label: "turns", show: (n) => String(n), unit: "turns", toLimit: Math.round, fromLimit: (n) => n },
  wallClockMs: { label: "time", show: (n) => `${Math.round(n / 60_000)} min`, unit: "minutes", toLimit: (m) => Math.round(m * 60_000), fromLimit: (n) => Math.round(n / 60_000) },
  spawns: { label: "spawns", show: (n) => String(n), unit: "spawns", toLimit: Math.round, fromLimit: (n) => n },
  costUsd: { label: "cost", show: (n) => `$${n.toFixed(2)}`, unit: "US dollars", toLimit: (d) => d, fromLimit: (n) => n },
};

const POLICY_TEXT = { stop: "work stopped", finish_turn: "current turns finish, nothing new starts", pause: "paused on budget: queued work waits for a raise" } as const;

/**
 * Spend against budget for a thread that is a delegated task with a budget
 * (`GET /api/ui/threads/:id/budget`, delegate_task's `budget { limits,
 * spent, exceeded, paused }`): each limit with what the subtree spent;
 * nothing for a thread without one. Re-read whenever `version` changes (a run
 * started or ended). A budget that is reached or ran out can be raised here
 * (`POST /api/budgets/raise`, t3_budget_raise): a paused tree goes on.
 */
export function BudgetView({ threadId, version }: { readonly threadId: string; readonly version: string }) {
  const [read, setRead] = useState<{ taskId: string | null; budget: Budget | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [raising, setRaising] = useState(false);
  const [reload, setReload] = useState(0);
  useEffect(() => {
    let live = true;
    callApi<{ taskId: string | null; budget: Budget | null }>("GET", `/api/ui/threads/${encodeURIComponent(threadId)}/budget`).then(
      (out) => live && setRead(out),
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [threadId, version, reload]);
  if (error !== null) return <div className="budget error-text">Budget: {error}</div>;
  const budget = read?.budget ?? null;
  if (budget === null) return null;
  const kinds = (Object.keys(KIND_LABEL) as BudgetKind[]).filter((kind) => budget.limits[kind] !== undefined);
  const spentOut = budget.exceeded !== null || budget.reached.length > 0;
  return (
    <div className={`budget${spentOut ? " exceeded" : ""}`} aria-label="Budget">
      <span className="muted">Budget</span>
      {kinds.map((kind) => {
        const limit = budget.limits[kind]!;
        const spent = budget.spent[kind];
        return (
          <span key={kind} className="budget-kind" data-kind={kind}>
            {KIND_LABEL[kind].label} {KIND_LABEL[kind].show(spent)} / {KIND_LABEL[kind].show(limit)}
            <meter min={0} max={limit} value={Math.min(spent, limit)} />
          </span>
        );
      })}
      {budget.exceeded !== null ? (
        <span className="error-text">
          ran out of {KIND_LABEL[budget.exceeded.kind].label} ({POLICY_TEXT[budget.exceeded.policy]})
        </span>
      ) : budget.paused ? (
        <span className="error-text">{POLICY_TEXT.pause}</span>
      ) : null}
      {spentOut && read?.taskId != null && !raising ? (
        <button type="button" onClick={() => setRaising(true)}>
          Raise…
        </button>
      ) : null}
      {raising && read?.taskId != null ? (
        <RaiseForm
          taskId={read.taskId}
          budget={budget}
          kinds={kinds}
          onDone={() => {
            setRaising(false);
            setReload((n) => n + 1);
          }}
        />
      ) : null}
    </div>
  );
}

/** New limits for a budget's kinds, a reached one prefilled at twice its limit or its spend, whichever is more; only the changed ones are sent. */
function RaiseForm({ taskId, budget, kinds, onDone }: { readonly taskId: string; readonly budget: Budget; readonly kinds: readonly BudgetKind[]; readonly onDone: () => void }) {
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      kinds.map((kind) => {
        const limit = budget.limits[kind]!;
        return [kind, String(KIND_LABEL[kind].fromLimit(budget.reached.includes(kind) ? Math.max(limit, budget.spent[kind]) * 2 : limit))];
      }),
    ),
  );
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = () => {
    const limits: Record<string, number> = {};
    for (const kind of kinds) {
      const typed = Number(values[kind]);
      if (!Number.isFinite(typed) || typed <= 0) return setProblem(`${KIND_LABEL[kind].label}: enter a positive number of ${KIND_LABEL[kind].unit}`);
      const limit = KIND_LABEL[kind].toLimit(typed);
      if (limit !== budget.limits[kind]) limits[kind] = limit;
    }
    if (Object.keys(limits).length === 0) return setProblem("change at least one limit");
    setBusy(true);
    callApi("POST", "/api/budgets/raise", { taskId, limits }).then(onDone, (e: unknown) => {
      setBusy(false);
      setProblem(errorText(e));
    });
  };
  return (
    <form
      className="budget-raise"
      noValidate
      aria-label="Raise budget"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      {kinds.map((kind) => (
        <label key={kind}>
          {KIND_LABEL[kind].label} ({KIND_LABEL[kind].unit})
          <input type="number" step="any" value={values[kind]} onChange={(event) => setValues({ ...values, [kind]: event.target.value })} />
        </label>
      ))}
      <button type="submit" disabled={busy}>
        Raise
      </button>
      <button type="button" onClick={onDone}>
        Cancel
      </button>
      {problem !== null ? <span className="error-text">{problem}</span> : null}
    </form>
  );
}
