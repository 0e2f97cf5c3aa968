import { z } from "zod";
import type { GuestShareLink } from "../entities/guestShares.js";
import type { CommandReceipt } from "../envelopes.js";
import { SEARCH_KINDS, type ThreadSearchOutput } from "../tools/searchTools.js";
import { ThreadLaunchInput, type ThreadLaunchOutput } from "../tools/threadTools.js";
import type { TurnItem } from "../turnItems.js";
import type { WorkflowOutput, WorkflowScriptOutput } from "../tools/workflowTools.js";
import { FullThreadDiffInput, type ThreadDiffOutput, TurnDiffInput, WorktreeThreadIdsInput, type WorktreeThreadIdsOutput } from "../workspaceQueries.js";
import { BOUNDED_SNAPSHOT_LIMITS } from "./projections.js";
import type { CommandOutputUpdate, SearchStreamUpdate, ShellSnapshot, ShellStreamUpdate, ThreadFamily, ThreadProjection, ThreadStreamUpdate } from "./projections.js";

/** The 18 WebSocket methods of spec 004 §3.3 (ORCHESTRATION_V2_WS_METHODS), and guestShare.create beside them (its rpc). */
export const WsMethod = {
  dispatchCommand: "orchestration.dispatchCommand",
  getTurnDiff: "orchestration.getTurnDiff",
  getFullThreadDiff: "orchestration.getFullThreadDiff",
  searchThreads: "orchestration.searchThreads",
  searchThread: "orchestration.searchThread",
  searchThreadStream: "orchestration.searchThreadStream",
  getArchivedShellSnapshot: "orchestration.getArchivedShellSnapshot",
  getThreadFamily: "orchestration.getThreadFamily",
  getWorktreeThreadIds: "orchestration.getWorktreeThreadIds",
  getThreadProjection: "orchestration.getThreadProjection",
  getWorkflowScript: "orchestration.getWorkflowScript",
  stopWorkflow: "orchestration.stopWorkflow",
  getTurnItem: "orchestration.getTurnItem",
  launchThread: "orchestration.launchThread",
  subscribeArchivedShell: "orchestration.subscribeArchivedShell",
  subscribeShell: "orchestration.subscribeShell",
  subscribeThread: "orchestration.subscribeThread",
  subscribeCommandOutput: "orchestration.subscribeCommandOutput",
  guestShareCreate: "guestShare.create",
} as const;
export type WsMethod = (typeof WsMethod)[keyof typeof WsMethod];

export const WS_METHODS: readonly WsMethod[] = Object.values(WsMethod);

const ThreadIdParam = z.string().min(1);
/** A log position to resume after; omitted (or too old) starts from a snapshot. */
const AfterSequenceParam = z.number().int().nonnegative().optional();

/** Search fields shared by the search methods: the t3_thread_search limits (contracts/tools/searchTools.ts). */
const SearchFields = {
  query: z.string().min(1).max(500),
  kinds: z.array(z.enum(SEARCH_KINDS)).min(1).max(SEARCH_KINDS.length).optional(),
  includeArchived: z.boolean().optional(),
  includeSubagents: z.boolean().optional(),
};
const SearchPaging = { limit: z.number().int().min(1).max(50).optional(), offset: z.number().int().min(0).max(1_000).optional() };

/**
 * Every method's params, validated by the server before the method runs: a
 * table the compiler checks is total over WsMethod.
 */
export const WS_METHOD_PARAMS = {
  "orchestration.dispatchCommand": z.object({ command: z.unknown() }).strict(),
  "orchestration.getTurnDiff": TurnDiffInput,
  "orchestration.getFullThreadDiff": FullThreadDiffInput,
  "orchestration.searchThreads": z.object({ ...SearchFields, ...SearchPaging, projectId: z.string().min(1).max(512).optional() }).strict(),
  "orchestration.searchThread": z.object({ threadId: ThreadIdParam, ...SearchFields, ...SearchPaging }).strict(),
  "orchestration.searchThreadStream": z.object({ threadId: ThreadIdParam, ...SearchFields, pageSize: z.number().int().min(1).max(50).optional() }).strict(),
  "orchestration.getArchivedShellSnapshot": z.object({}).strict(),
  "orchestration.getThreadFamily": z.object({ threadId: ThreadIdParam }).strict(),
  "orchestration.getWorktreeThreadIds": WorktreeThreadIdsInput,
  "orchestration.getThreadProjection": z.object({ threadId: ThreadIdParam }).strict(),
  "orchestration.getWorkflowScript": z.object({ workflowId: z.string().min(1) }).strict(),
  "orchestration.stopWorkflow": z.object({ workflowId: z.string().min(1) }).strict(),
  "orchestration.getTurnItem": z.object({ threadId: ThreadIdParam, itemId: z.string().min(1) }).strict(),
  "orchestration.launchThread": ThreadLaunchInput,
  "orchestration.subscribeArchivedShell": z.object({ afterSequence: AfterSequenceParam }).strict(),
  "orchestration.subscribeShell": z.object({ afterSequence: AfterSequenceParam, omitIdleSubagents: z.boolean().optional() }).strict(),
  "orchestration.subscribeThread": z
    .object({
      threadId: ThreadIdParam,
      afterSequence: AfterSequenceParam,
      turnItemLimit: z.number().int().positive().max(BOUNDED_SNAPSHOT_LIMITS.maxTurnItems).optional(),
    })
    .strict(),
  "orchestration.subscribeCommandOutput": z
    .object({ threadId: ThreadIdParam, outputStreamId: z.string().min(1), fromOffset: z.number().int().nonnegative().optional() })
    .strict(),
  "guestShare.create": z.object({ threadId: ThreadIdParam }).strict(),
} as const satisfies { readonly [M in WsMethod]: z.ZodType };

export type WsParams<M extends WsMethod> = z.input<(typeof WS_METHOD_PARAMS)[M]>;

/** Request methods answer once; subscriptions stream updates until complete, error or unsubscribe. */
export type WsMethodKind = "request" | "subscription";

export const WS_METHOD_KIND: { readonly [M in WsMethod]: WsMethodKind } = {
  "orchestration.dispatchCommand": "request",
  "orchestration.getTurnDiff": "request",
  "orchestration.getFullThreadDiff": "request",
  "orchestration.searchThreads": "request",
  "orchestration.searchThread": "request",
  "orchestration.searchThreadStream": "subscription",
  "orchestration.getArchivedShellSnapshot": "request",
  "orchestration.getThreadFamily": "request",
  "orchestration.getWorktreeThreadIds": "request",
  "orchestration.getThreadProjection": "request",
  "orchestration.getWorkflowScript": "request",
  "orchestration.stopWorkflow": "request",
  "orchestration.getTurnItem": "request",
  "orchestration.launchThread": "request",
  "orchestration.subscribeArchivedShell": "subscription",
  "orchestration.subscribeShell": "subscription",
  "orchestration.subscribeThread": "subscription",
  "orchestration.subscribeCommandOutput": "subscription",
  "guestShare.create": "request",
};

/** What each request method answers and what each subscription streams (docs/wire.md). */
export interface WsResults {
  "orchestration.dispatchCommand": CommandReceipt;
  "orchestration.getTurnDiff": ThreadDiffOutput;
  "orchestration.getFullThreadDiff": ThreadDiffOutput;
  "orchestration.searchThreads": ThreadSearchOutput;
  "orchestration.searchThread": ThreadSearchOutput;
  "orchestration.getArchivedShellSnapshot": ShellSnapshot;
  "orchestration.getThreadFamily": ThreadFamily;
  "orchestration.getWorktreeThreadIds": WorktreeThreadIdsOutput;
  "orchestration.getThreadProjection": ThreadProjection;
  "orchestration.getWorkflowScript": WorkflowScriptOutput;
  "orchestration.stopWorkflow": WorkflowOutput;
  "orchestration.getTurnItem": { readonly item: TurnItem };
  "orchestration.launchThread": ThreadLaunchOutput;
  "guestShare.create": GuestShareLink;
}

export interface WsUpdates {
  "orchestration.searchThreadStream": SearchStreamUpdate;
  "orchestration.subscribeArchivedShell": ShellStreamUpdate;
  "orchestration.subscribeShell": ShellStreamUpdate;
  "orchestration.subscribeThread": ThreadStreamUpdate;
  "orchestration.subscribeCommandOutput": CommandOutputUpdate;
}

export type WsRequestMethod = keyof WsResults;
export type WsSubscriptionMethod = keyof WsUpdates;

// Both maps together cover every method exactly once (checked here by the compiler).
type Covered = WsRequestMethod | WsSubscriptionMethod;
const coverage: { readonly [M in WsMethod]: M extends Covered ? true : never } & { readonly [M in Covered]: M extends WsMethod ? true : never } = {
  "orchestration.dispatchCommand": true,
  "orchestration.getTurnDiff": true,
  "orchestration.getFullThreadDiff": true,
  "orchestration.searchThreads": true,
  "orchestration.searchThread": true,
  "orchestration.searchThreadStream": true,
  "orchestration.getArchivedShellSnapshot": true,
  "orchestration.getThreadFamily": true,
  "orchestration.getWorktreeThreadIds": true,
  "orchestration.getThreadProjection": true,
  "orchestration.getWorkflowScript": true,
  "orchestration.stopWorkflow": true,
  "orchestration.getTurnItem": true,
  "orchestration.launchThread": true,
  "orchestration.subscribeArchivedShell": true,
  "orchestration.subscribeShell": true,
  "orchestration.subscribeThread": true,
  "orchestration.subscribeCommandOutput": true,
  "guestShare.create": true,
};
void coverage;
