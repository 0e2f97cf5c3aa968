import type { z } from "zod";
import type { Caller } from "../app/caller.js";
import { dispatchCommand } from "../app/commands.js";
import type { AppContext } from "../app/context.js";
import { type StreamHandle, type StreamSink, subscribeCommandOutput, subscribeShell, subscribeThread } from "../app/orchestration/subscriptions.js";
import { getThreadFamily, getThreadProjection, getTurnItem } from "../app/orchestration/threadViews.js";
import { searchThreadStream } from "../app/search/searchStream.js";
import { searchThread, searchThreads } from "../app/search/threadSearch.js";
import { getArchivedShellSnapshot } from "../app/snapshots.js";
import { launchThread } from "../app/threads/creation.js";
import { getFullThreadDiff, getTurnDiff } from "../app/workspaces/diffs.js";
import { getWorktreeThreadIds } from "../app/workspaces/worktrees.js";
import { getWorkflowScript, stopWorkflow } from "../app/workflows/start.js";
import type { WS_METHOD_PARAMS, WsRequestMethod, WsResults, WsSubscriptionMethod, WsUpdates } from "../contracts/wire/methods.js";

type Params<M extends keyof typeof WS_METHOD_PARAMS> = z.output<(typeof WS_METHOD_PARAMS)[M]>;

export type RequestHandler<M extends WsRequestMethod> = (params: Params<M>, caller: Caller) => Promise<WsResults[M]> | WsResults[M];
export type SubscriptionHandler<M extends WsSubscriptionMethod> = (
  params: Params<M>,
  caller: Caller,
  sink: StreamSink<WsUpdates[M]>,
) => Promise<StreamHandle> | StreamHandle;

export type WsMethodTable = { readonly [M in WsRequestMethod]: RequestHandler<M> } & { readonly [M in WsSubscriptionMethod]: SubscriptionHandler<M> };

/**
 * Every WebSocket method (spec 004 §3.3) bound to its app function: one line
 * each, total over the method names. The methods another branch of work will
 * supply answer `unsupported` until their app function lands; wiring one is
 * replacing its line.
 */
export function wsMethodTable(app: AppContext): WsMethodTable {
  return {
    "orchestration.dispatchCommand": (params, caller) => dispatchCommand(app, caller, params.command),
    "orchestration.getTurnDiff": (params, caller) => getTurnDiff(app, caller, params),
    "orchestration.getFullThreadDiff": (params, caller) => getFullThreadDiff(app, caller, params),
    "orchestration.searchThreads": (params, caller) => searchThreads(app, caller, params),
    "orchestration.searchThread": (params, caller) => searchThread(app, caller, params),
    "orchestration.searchThreadStream": (params, caller, sink) => searchThreadStream(app, caller, params, sink),
    "orchestration.getArchivedShellSnapshot": (_params, caller) => getArchivedShellSnapshot(app, caller),
    "orchestration.getThreadFamily": (params, caller) => getThreadFamily(app, caller, params.threadId),
    "orchestration.getWorktreeThreadIds": (params, caller) => getWorktreeThreadIds(app, caller, params),
    "orchestration.getThreadProjection": (params, caller) => getThreadProjection(app, caller, params.threadId),
    "orchestration.getWorkflowScript": (params, caller) => getWorkflowScript(app, caller, params),
    "orchestration.stopWorkflow": (params, caller) => stopWorkflow(app, caller, params),
    "orchestration.getTurnItem": (params, caller) => getTurnItem(app, caller, params),
    "orchestration.launchThread": (params, caller) => launchThread(app, caller, params),
    "orchestration.subscribeArchivedShell": (params, caller, sink) => subscribeShell(app, caller, { ...params, archivedOnly: true }, sink),
    "orchestration.subscribeShell": (params, caller, sink) => subscribeShell(app, caller, params, sink),
    "orchestration.subscribeThread": (params, caller, sink) => subscribeThread(app, caller, params, sink),
    "orchestration.subscribeCommandOutput": (params, caller, sink) => subscribeCommandOutput(app, caller, params, sink),
  };
}
