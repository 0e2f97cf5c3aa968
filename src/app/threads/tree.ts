import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../../core/state.js";
import { currentRunOf } from "../../engine/queries.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { limitMoveText, limitRecoveryView } from "../limits/limitView.js";
import { backgroundWorkText } from "./backgroundView.js";

/**
 * The thread tree for people: lineage (subagents, forks, handoffs) with each
 * node's status and what it waits on, and unique id prefixes resolved to ids.
 * Owner reads: the CLI and HTTP API use them; agents have t3_thread_list.
 */

export interface ThreadTreeNode {
  readonly threadId: string;
  readonly title: string;
  readonly relation: AppThread["lineage"]["relation"];
  readonly parentThreadId: string | null;
  readonly providerInstanceId: string | null;
  /** The latest run's status, or idle. */
  readonly status: string;
  readonly latestRunId: string | null;
  readonly archived: boolean;
  /** What holds the thread up, for a person: "approval runtime-request:…", "input …", "children", "queued"; null when nothing. */
  readonly waitingOn: string | null;
  readonly pendingRequestIds: readonly string[];
  /**
   * A usage limit holds the thread's work, for a person: "waiting for the limit to reset at 14:05 UTC, resumes by itself",
   * or moved it while the run continuing it is the latest: "moved to codex after claude's usage limit (it resets at …)"; absent when none.
   */
  readonly limit?: string;
  readonly children: readonly ThreadTreeNode[];
}

export interface ThreadTreeResult {
  /** The asked-for thread's tree, or every root thread's (newest first) when none was named. */
  readonly roots: readonly ThreadTreeNode[];
  /** The asked-for thread's ancestors, nearest last; empty without a root. */
  readonly ancestors: readonly { readonly threadId: string; readonly title: string }[];
}

const TERMINAL = new Set(["completed", "failed", "interrupted", "cancelled"]);

/** A thread's children, by parent id (one scan of the state). */
function childrenIndex(state: OrchestrationState): Map<string, AppThread[]> {
  const index = new Map<string, AppThread[]>();
  for (const thread of state.threads.values()) {
    const parent = thread.lineage.parentThreadId;
    if (thread.deletedAt !== null || parent === null) continue;
    const list = index.get(parent) ?? [];
    list.push(thread);
    index.set(parent, list);
  }
  for (const list of index.values()) list.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return index;
}

function pendingRequestsOf(state: OrchestrationState, threadId: string): string[] {
  return [...state.runtimeRequests.values()].filter((r) => r.threadId === threadId && r.status === "pending").map((r) => r.id);
}

function waitingOn(state: OrchestrationState, thread: AppThread, status: string, pending: readonly string[], children: readonly ThreadTreeNode[]): string | null {
  const requests = [...state.runtimeRequests.values()].filter((r) => r.threadId === thread.id && r.status === "pending");
  const approval = requests.find((r) => r.kind !== "user_input");
  const question = requests.find((r) => r.kind === "user_input");
  if (status === "waiting_on_approval" && approval !== undefined) return `approval ${approval.id}`;
  if (status === "waiting_on_user_input" && question !== undefined) return `input ${question.id}`;
  if (status === "waiting_on_subagent") {
    const busy = children.filter((c) => c.status !== "idle" && !TERMINAL.has(c.status)).length;
    return `children (${busy} working)`;
  }
  if (status === "settling_background_work") return backgroundWorkText(state, thread) ?? "background work";
  if (status === "queued") return "queued";
  if (pending.length > 0) return `${pending.length} pending request${pending.length === 1 ? "" : "s"}`;
  return null;
}

function limitText(state: OrchestrationState, thread: AppThread): Pick<ThreadTreeNode, "limit"> {
  const view = limitRecoveryView(state, thread);
  const text = view?.text ?? limitMoveText(state, thread);
  return text === null ? {} : { limit: text };
}

function node(state: OrchestrationState, index: Map<string, AppThread[]>, thread: AppThread, includeArchived: boolean, depth: number): ThreadTreeNode {
  // Lineage is acyclic by construction; the depth bound only guards a corrupted log.
  const kids = depth > 64 ? [] : (index.get(thread.id) ?? []).filter((c) => includeArchived || c.archivedAt === null);
  const children = kids.map((child) => node(state, index, child, includeArchived, depth + 1));
  const latest = currentRunOf(state, thread.id);
  const status = latest?.status ?? "idle";
  const pending = pendingRequestsOf(state, thread.id);
  return {
    threadId: thread.id,
    title: thread.title,
    relation: thread.lineage.relation,
    parentThreadId: thread.lineage.parentThreadId,
    providerInstanceId: thread.providerInstanceId,
    status,
    latestRunId: latest?.id ?? null,
    archived: thread.archivedAt !== null,
    waitingOn: waitingOn(state, thread, status, pending, children),
    pendingRequestIds: pending,
    ...limitText(state, thread),
    children,
  };
}

/** The lineage tree under a thread, or under every root thread; owner only. */
export function threadTree(ctx: AppContext, caller: Caller, input: { readonly threadId?: string; readonly includeArchived?: boolean }): ThreadTreeResult {
  if (caller.kind !== "owner") fail("capability_denied", "the thread tree is an owner read");
  const state = ctx.orchestrator.state;
  const index = childrenIndex(state);
  const includeArchived = input.includeArchived === true;
  if (input.threadId !== undefined) {
    const threadId = resolveThreadId(ctx, input.threadId);
    const thread = state.threads.get(threadId)!;
    const ancestors: { threadId: string; title: string }[] = [];
    for (let parentId = thread.lineage.parentThreadId; parentId !== null && ancestors.length < 64; ) {
      const parent = state.threads.get(parentId);
      if (parent === undefined) break;
      ancestors.unshift({ threadId: parent.id, title: parent.title });
      parentId = parent.lineage.parentThreadId;
    }
    return { roots: [node(state, index, thread, true, 0)], ancestors };
  }
  const roots = [...state.threads.values()]
    .filter((t) => t.deletedAt === null && (t.lineage.parentThreadId === null || !state.threads.has(t.lineage.parentThreadId)))
    .filter((t) => includeArchived || t.archivedAt === null)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { roots: roots.map((t) => node(state, index, t, includeArchived, 0)), ancestors: [] };
}

/** Most candidates an ambiguous prefix lists. */
const CANDIDATE_LIMIT = 10;

/**
 * An id, or a unique prefix of one: the full id matches itself; otherwise any
 * live thread whose id starts with `ref`, or with `thread:` + `ref`. None is
 * thread_not_found; several is invalid_request listing the candidates.
 */
export function resolveThreadId(ctx: AppContext, ref: string): string {
  const state = ctx.orchestrator.state;
  const exact = state.threads.get(ref);
  if (exact !== undefined && exact.deletedAt === null) return exact.id;
  return uniqueByPrefix(
    "thread",
    ref,
    [...state.threads.values()].filter((t) => t.deletedAt === null).map((t) => ({ id: t.id, label: t.title })),
    "thread_not_found",
    ["thread:"],
  );
}

/** Shortest tail prefix accepted: shorter ones would match too much by accident. */
const MIN_TAIL_PREFIX = 4;

/**
 * Derived ids (a delegated child's `thread:client-request:…:request:<uuid>`)
 * share a long head, so the start of their last `:` segment names them too.
 */
function lastSegmentMatches(id: string, ref: string): boolean {
  if (ref.length < MIN_TAIL_PREFIX || ref.includes(":")) return false;
  return id.slice(id.lastIndexOf(":") + 1).startsWith(ref);
}

export interface IdCandidate {
  /** What a match resolves to. */
  readonly id: string;
  readonly label: string;
  /** Other ids that name the same thing (a task's child thread); `id` always counts. */
  readonly aliases?: readonly string[];
}

/**
 * Pick the one candidate `ref` names: its id starts with `ref`, or with one of
 * `idPrefixes` (e.g. "thread:") followed by `ref`, or its last `:` segment
 * starts with `ref` (4 characters at least). Several candidates for the same
 * id count once.
 */
export function uniqueByPrefix(
  noun: string,
  ref: string,
  candidates: readonly IdCandidate[],
  notFound: "thread_not_found" | "task_not_found" | "invalid_request",
  idPrefixes: readonly string[],
): string {
  const trimmed = ref.trim();
  const byId = new Map<string, IdCandidate>();
  if (trimmed !== "") {
    for (const c of candidates) {
      if (byId.has(c.id)) continue;
      const names = [c.id, ...(c.aliases ?? [])];
      if (names.some((id) => id.startsWith(trimmed) || idPrefixes.some((p) => id.startsWith(`${p}${trimmed}`)) || lastSegmentMatches(id, trimmed))) byId.set(c.id, c);
    }
  }
  const matches = [...byId.values()];
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) fail(notFound, `${noun} ${ref} does not exist`);
  const shown = matches.slice(0, CANDIDATE_LIMIT).map((m) => `${m.id} (${m.label})`);
  const more = matches.length > CANDIDATE_LIMIT ? `, and ${matches.length - CANDIDATE_LIMIT} more` : "";
  fail("invalid_request", `${noun} id prefix "${ref}" is ambiguous: it matches ${shown.join(", ")}${more}`, { candidates: matches.slice(0, CANDIDATE_LIMIT).map((m) => m.id) });
}
