import { execFile } from "node:child_process";
import type { PullRequestStatus, PullRequestSyncResult } from "../contracts/pullRequests.js";

/** Reads one pull request's state from its host. */
export type PullRequestReader = (url: string, now: string) => Promise<PullRequestSyncResult>;

/** How long one `gh pr view` may take. */
const GH_TIMEOUT_MS = 30_000;
/** The longest error text kept from gh's stderr. */
const MAX_ERROR_CHARS = 500;

interface GhView {
  state?: unknown;
  reviewDecision?: unknown;
  statusCheckRollup?: unknown;
  title?: unknown;
  number?: unknown;
}

interface GhCheck {
  status?: unknown;
  conclusion?: unknown;
  state?: unknown;
}

const FAILED = new Set(["FAILURE", "CANCELLED", "TIMED_OUT", "ACTION_REQUIRED", "STARTUP_FAILURE", "ERROR"]);
const PENDING = new Set(["PENDING", "EXPECTED", "QUEUED", "IN_PROGRESS", "WAITING", "REQUESTED"]);

/** The combined status of gh's statusCheckRollup: check runs carry status/conclusion, commit statuses carry state. */
export function checksOf(rollup: unknown): PullRequestStatus["checks"] {
  if (!Array.isArray(rollup) || rollup.length === 0) return "none";
  let pending = false;
  for (const check of rollup as GhCheck[]) {
    const outcome = typeof check.conclusion === "string" && check.conclusion !== "" ? check.conclusion : check.state;
    if (typeof outcome === "string" && FAILED.has(outcome)) return "failing";
    if ((typeof check.status === "string" && check.status !== "COMPLETED") || (typeof outcome === "string" && PENDING.has(outcome))) pending = true;
  }
  return pending ? "pending" : "passing";
}

/** gh's JSON for one pull request, as a status; throws when the answer is not one. */
export function statusOfGhView(view: GhView, now: string): { status: PullRequestStatus; title: string | null; number: number | null } {
  const state = view.state === "OPEN" ? "open" : view.state === "MERGED" ? "merged" : view.state === "CLOSED" ? "closed" : null;
  if (state === null) throw new Error(`gh answered an unknown pull request state ${JSON.stringify(view.state)}`);
  const decision = view.reviewDecision === "APPROVED" ? "approved" : view.reviewDecision === "CHANGES_REQUESTED" ? "changes_requested" : view.reviewDecision === "REVIEW_REQUIRED" ? "review_required" : null;
  return {
    status: { state, reviewDecision: decision, checks: checksOf(view.statusCheckRollup), syncedAt: now },
    title: typeof view.title === "string" ? view.title.slice(0, 500) : null,
    number: typeof view.number === "number" && Number.isInteger(view.number) && view.number > 0 ? view.number : null,
  };
}

/**
 * Reads pull requests with the GitHub CLI (`gh pr view URL --json ...`),
 * using its own login. When gh is missing or fails, the result carries the
 * reason and no status; the watch keeps going and reports it.
 */
export function ghPullRequestReader(ghCommand = "gh"): PullRequestReader {
  return (url, now) =>
    new Promise((resolve) => {
      execFile(
        ghCommand,
        ["pr", "view", url, "--json", "state,reviewDecision,statusCheckRollup,title,number"],
        { timeout: GH_TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const failed = (message: string): void => resolve({ url, status: null, title: null, number: null, error: message.slice(0, MAX_ERROR_CHARS) });
          if (error !== null) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") return failed(`the GitHub CLI (${ghCommand}) is not installed or not on PATH`);
            return failed(`${ghCommand} pr view failed: ${stderr.trim() || error.message}`);
          }
          try {
            const read = statusOfGhView(JSON.parse(stdout) as GhView, now);
            resolve({ url, ...read, error: null });
          } catch (parseError) {
            failed(parseError instanceof Error ? parseError.message : String(parseError));
          }
        },
      );
    });
}
