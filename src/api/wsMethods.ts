import type { z } from "zod";
import type { App } from "../app/app.js";
import type { Caller } from "../app/caller.js";
import type { StreamHandle, StreamSink } from "../app/orchestration/subscriptions.js";
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
export function wsMethodTable(app: App): WsMethodTable {
  return {
    "orchestration.dispatchCommand": (params, caller) => app.dispatchCommand(caller, params.command),
    "orchestration.getTurnDiff": (params, caller) => app.getTurnDiff(caller, params),
    "orchestration.getFullThreadDiff": (params, caller) => app.getFullThreadDiff(caller, params),
    "orchestration.searchThreads": (params, caller) => app.searchThreads(caller, params),
    "orchestration.searchThread": (params, caller) => app.searchThread(caller, params),
    "orchestration.searchThreadStream": (params, caller, sink) => app.searchThreadStream(caller, params, sink),
    "orchestration.getArchivedShellSnapshot": (_params, caller) => app.getArchivedShellSnapshot(caller),
    "orchestration.getThreadFamily": (params, caller) => app.getThreadFamily(caller, params.threadId),
    "orchestration.getWorktreeThreadIds": (params, caller) => app.getWorktreeThreadIds(caller, params),
    "orchestration.getThreadProjection": (params, caller) => app.getThreadProjection(caller, params.threadId),
    "orchestration.getWorkflowScript": (params, caller) => app.getWorkflowScript(caller, params),
    "orchestration.stopWorkflow": (params, caller) => app.stopWorkflow(caller, params),
    "orchestration.getTurnItem": (params, caller) => app.getTurnItem(caller, params),
    "orchestration.launchThread": (params, caller) => app.launchThread(caller, params),
    "orchestration.subscribeArchivedShell": (params, caller, sink) => app.subscribeShell(caller, { ...params, archivedOnly: true }, sink),
    "orchestration.subscribeShell": (params, caller, sink) => app.subscribeShell(caller, params, sink),
    "orchestration.subscribeThread": (params, caller, sink) => app.subscribeThread(caller, params, sink),
    "orchestration.subscribeCommandOutput": (params, caller, sink) => app.subscribeCommandOutput(caller, params, sink),
    "guestShare.create": (params, caller) => app.openGuestShare(caller, params),
  };
}
