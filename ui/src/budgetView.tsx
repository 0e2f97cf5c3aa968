import { useEffect, useState } from "react";
import type { BudgetKind } from "../../src/contracts/entities/budgets.js";
import type { DelegateTaskResult } from "../../src/contracts/tools/toolOutputs.js";
import { callApi, errorText } from "./api.js";

type Budget = NonNullable<DelegateTaskResult["budget"]>;

/** How each budget kind reads: a table the compiler checks is total. */
const KIND_LABEL: { readonly [K in BudgetKind]: { readonly label: string; readonly show: (n: number) => string } } = {
  tokens: { label: "tokens", show: (n) => n.toLocaleString("en-US") },
  turns: { label: "turns", show: (n) => String(n) },
  wallClockMs: { label: "time", show: (n) => `${Math.round(n / 60_000)} min` },
  spawns: { label: "spawns", show: (n) => String(n) },
  costUsd: { label: "cost", show: (n) => `$${n.toFixed(2)}` },
};

/**
 * Spend against budget for a thread that is a delegated task with a budget
 * (`GET /api/ui/threads/:id/budget`, delegate_task's `budget { limits,
 * spent, exceeded }`): each limit with what the subtree spent; nothing for a
 * thread without one. Re-read whenever `version` changes (a run started or ended).
 */
export function BudgetView({ threadId, version }: { readonly threadId: string; readonly version: string }) {
  const [budget, setBudget] = useState<Budget | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    callApi<{ budget: Budget | null }>("GET", `/api/ui/threads/${encodeURIComponent(threadId)}/budget`).then(
      (out) => live && setBudget(out.budget),
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [threadId, version]);
  if (error !== null) return <div className="budget error-text">Budget: {error}</div>;
  if (budget === null) return null;
  const kinds = (Object.keys(KIND_LABEL) as BudgetKind[]).filter((kind) => budget.limits[kind] !== undefined);
  return (
    <div className={`budget${budget.exceeded ? " exceeded" : ""}`} aria-label="Budget">
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
      {budget.exceeded ? (
        <span className="error-text">
          ran out of {KIND_LABEL[budget.exceeded.kind].label} ({budget.exceeded.policy === "stop" ? "work stopped" : "current turns finish, nothing new starts"})
        </span>
      ) : null}
    </div>
  );
}
