import type { WorkflowStartInput } from "../contracts/tools/workflowTools.js";
import type { Caller } from "./caller.js";
import { dispatchCommand } from "./commands.js";
import type { AppContext } from "./context.js";
import { getChildThreadBudget } from "./delegation/taskView.js";
import { estimateTarget } from "./budgets/targetEstimate.js";
import { delegateTask } from "./delegation/delegate.js";
import { resolveTaskId } from "./delegation/taskRefs.js";
import { taskCancel, taskStatus } from "./delegation/tasks.js";
import { cancelDurableTask, durableTaskResult, getDurableTask, listDurableTasks, watchDurableTask } from "./durableTasks/durableTasks.js";
import { recordTaskHandle, startDelegationTask, startWaitTask } from "./durableTasks/toolTaskStart.js";
import { raiseBudget } from "./budgets/raise.js";
import {
  closeGuestShare,
  dismissGuestMessage,
  followGuestView,
  listGuestMessages,
  openGuestShare,
  readGuestAttachment,
  readGuestShare,
  readGuestView,
  redeemGuestLink,
  sendGuestMessage,
  submitGuestMessage,
} from "./guestShare/guestShares.js";
import { fail } from "./errors.js";
import { subscribeCommandOutput, subscribeShell, subscribeThread } from "./orchestration/subscriptions.js";
import { getBoundedSnapshot, getHistoryPage, getThreadFamily, getThreadProjection, getTranscript, getTurnItem } from "./orchestration/threadViews.js";
import { type ProviderCatalogSettings, listProviderSetup, prepareAcpAgent, searchAcpAgents } from "./providers/acpCatalog.js";
import { failOverLimited } from "./limits/failover.js";
import { followLimitResumes, limitResumes, resumeAfterLimit } from "./limits/limitResumes.js";
import { followSettlingRuns, settleTimedOut, settlingRuns } from "./threads/backgroundSettle.js";
import { listInbox, respondToInboxRequest } from "./requests/inbox.js";
import { listPendingRequests, readPendingRequest, respondToPendingRequest } from "./requests/pendingRequests.js";
import { followScheduledTaskChanges } from "./schedules/changes.js";
import { deleteScheduledTask, listScheduledTasks, runScheduledTaskNow, scheduleTask, updateScheduledTask } from "./schedules/scheduledTasks.js";
import { dueScheduledTasks, fireDueScheduledTask } from "./schedules/timed.js";
import { receiveWebhook } from "./schedules/webhooks.js";
import { searchThreadStream } from "./search/searchStream.js";
import { searchThread, searchThreads, threadSearch } from "./search/threadSearch.js";
import { listSecretRequests, requestSecret, supplySecret } from "./secrets/secretRequests.js";
import { listSessions, releaseSession } from "./sessions.js";
import { getArchivedShellSnapshot, getShellSnapshotPage } from "./snapshots.js";
import { waitForBackgroundWork } from "./threads/backgroundWait.js";
import { capabilities, uiCapabilities } from "./threads/capabilities.js";
import { configureThread, threadConfiguration } from "./threads/configuration.js";
import { createThreads, launchThread } from "./threads/creation.js";
import { forkThread, listTransfers, mergeBack } from "./threads/lineage.js";
import { organizeThread } from "./threads/organize.js";
import { followPullRequestWatches, pullRequestWatches, recordPullRequestSync } from "./threads/pullRequestWatches.js";
import { cancelQueuedRun, editQueuedRun, listQueue, promoteQueuedRun, readQueuedRun, reorderQueue } from "./threads/queue.js";
import { listThreads, readThread } from "./threads/reads.js";
import { waitForThread } from "./threads/threadWait.js";
import { readThreadTrace } from "./traces/threadTrace.js";
import { getTreeRollup, getTreeWaterfall } from "./trees/treeGlance.js";
import { resolveThreadId, threadTree } from "./threads/tree.js";
import { interruptThread, linkPullRequest, sendToThread, unlinkPullRequest, updateThread } from "./threads/writes.js";
import { getWorkflowScript, startWorkflow, stopWorkflow, workflowStatus } from "./workflows/start.js";
import { getUiWorkflow } from "./workflows/uiPanel.js";
import type { WorkflowRunner } from "./workflows/runner.js";
import type { WaitContext } from "./waits.js";
import { getFullThreadDiff, getTurnDiff, listThreadCheckpoints } from "./workspaces/diffs.js";
import { openThreadPullRequest } from "./workspaces/pullRequests.js";
import { mergeIntoParent } from "./workspaces/mergeIntoParent.js";
import { mergeQueue } from "./workspaces/mergeQueue.js";
import { getWorktreeThreadIds, listWorktrees, pruneWorktrees } from "./workspaces/worktrees.js";

/**
 * The application as every transport (MCP, HTTP, WebSocket, the scheduler)
 * holds it: one function per operation, already bound to the app's context,
 * and the few settings transports shape answers with. Nothing of the engine
 * is reachable through it: the context stays inside the functions, which
 * take a Caller and inputs and hand back plain results (streams: a handle
 * that closes them). An operation is one line here; a transport never builds
 * an AppContext.
 */
export type App = ReturnType<typeof bindApp>;

/** Bind every app operation to one context (the server's composition does it once). */
export function bindApp(ctx: AppContext, workflows: WorkflowRunner) {
  const on =
    <A extends readonly unknown[], R>(operation: (ctx: AppContext, ...args: A) => R) =>
    (...args: A): R =>
      operation(ctx, ...args);
  const catalog = (): ProviderCatalogSettings => ctx.providerCatalog ?? fail("unsupported", "this server has no ACP registry catalog");
  return {
    environmentId: ctx.environmentId,
    clock: ctx.clock,
    /** Largest webhook body accepted, in bytes (config scheduler.webhookMaxBodyBytes). */
    webhookMaxBodyBytes: ctx.schedules.webhookMaxBodyBytes,

    // Threads.
    capabilities: on(capabilities),
    uiCapabilities: on(uiCapabilities),
    createThreads: on(createThreads),
    launchThread: on(launchThread),
    listThreads: on(listThreads),
    readThread: on(readThread),
    readThreadTrace: on(readThreadTrace),
    waitForThread: on(waitForThread),
    updateThread: on(updateThread),
    sendToThread: on(sendToThread),
    interruptThread: on(interruptThread),
    linkPullRequest: on(linkPullRequest),
    unlinkPullRequest: on(unlinkPullRequest),
    configureThread: on(configureThread),
    threadConfiguration: on(threadConfiguration),
    organizeThread: on(organizeThread),
    forkThread: on(forkThread),
    mergeBack: on(mergeBack),
    listTransfers: on(listTransfers),
    threadTree: on(threadTree),
    resolveThreadId: on(resolveThreadId),
    waitForBackgroundWork: on(waitForBackgroundWork),
    listQueue: on(listQueue),
    readQueuedRun: on(readQueuedRun),
    editQueuedRun: on(editQueuedRun),
    cancelQueuedRun: on(cancelQueuedRun),
    reorderQueue: on(reorderQueue),
    promoteQueuedRun: on(promoteQueuedRun),

    // Delegated tasks and requests.
    delegateTask: on(delegateTask),
    taskStatus: on(taskStatus),
    taskCancel: on(taskCancel),
    getDurableTask: on(getDurableTask),
    durableTaskResult: on(durableTaskResult),
    listDurableTasks: on(listDurableTasks),
    cancelDurableTask: on(cancelDurableTask),
    watchDurableTask: on(watchDurableTask),
    startWaitTask: on(startWaitTask),
    recordTaskHandle: on(recordTaskHandle),
    startDelegationTask: on(startDelegationTask),
    raiseBudget: on(raiseBudget),
    resolveTaskId: on(resolveTaskId),
    getChildThreadBudget: on(getChildThreadBudget),
    estimateTarget: on(estimateTarget),
    listPendingRequests: on(listPendingRequests),
    readPendingRequest: on(readPendingRequest),
    respondToPendingRequest: on(respondToPendingRequest),
    listInbox: on(listInbox),
    respondToInboxRequest: on(respondToInboxRequest),
    requestSecret: on(requestSecret),
    listSecretRequests: on(listSecretRequests),
    supplySecret: on(supplySecret),

    // The wire: commands, snapshots, reads and live subscriptions.
    dispatchCommand: on(dispatchCommand),
    getShellSnapshotPage: on(getShellSnapshotPage),
    getArchivedShellSnapshot: on(getArchivedShellSnapshot),
    getThreadProjection: on(getThreadProjection),
    getBoundedSnapshot: on(getBoundedSnapshot),
    getHistoryPage: on(getHistoryPage),
    getTranscript: on(getTranscript),
    getThreadFamily: on(getThreadFamily),
    getTurnItem: on(getTurnItem),
    subscribeShell: on(subscribeShell),
    subscribeThread: on(subscribeThread),
    subscribeCommandOutput: on(subscribeCommandOutput),

    // Search.
    threadSearch: on(threadSearch),
    searchThreads: on(searchThreads),
    searchThread: on(searchThread),
    searchThreadStream: on(searchThreadStream),

    // Workspaces.
    getTurnDiff: on(getTurnDiff),
    getFullThreadDiff: on(getFullThreadDiff),
    listThreadCheckpoints: on(listThreadCheckpoints),
    getWorktreeThreadIds: on(getWorktreeThreadIds),
    listWorktrees: on(listWorktrees),
    pruneWorktrees: on(pruneWorktrees),
    mergeIntoParent: on(mergeIntoParent),
    mergeQueue: on(mergeQueue),
    openThreadPullRequest: on(openThreadPullRequest),

    // Workflows.
    startWorkflow: (caller: Caller, input: WorkflowStartInput, wait: WaitContext) => startWorkflow(ctx, workflows, caller, input, wait),
    workflowStatus: on(workflowStatus),
    getWorkflowScript: on(getWorkflowScript),
    stopWorkflow: on(stopWorkflow),
    getUiWorkflow: on(getUiWorkflow),

    // The tree at a glance (the web UI's sidebar roll-up and waterfall).
    getTreeRollup: on(getTreeRollup),
    getTreeWaterfall: on(getTreeWaterfall),

    // Scheduled tasks, their change feed, their timer and webhooks; pull request watches.
    scheduleTask: on(scheduleTask),
    listScheduledTasks: on(listScheduledTasks),
    updateScheduledTask: on(updateScheduledTask),
    deleteScheduledTask: on(deleteScheduledTask),
    runScheduledTaskNow: on(runScheduledTaskNow),
    followScheduledTaskChanges: on(followScheduledTaskChanges),
    dueScheduledTasks: on(dueScheduledTasks),
    fireDueScheduledTask: on(fireDueScheduledTask),
    receiveWebhook: on(receiveWebhook),
    pullRequestWatches: on(pullRequestWatches),
    followPullRequestWatches: on(followPullRequestWatches),
    recordPullRequestSync: on(recordPullRequestSync),
    // Work a usage limit stopped: the threads waiting for the reset, their change feed and the resume (docs/limits.md).
    limitResumes: on(limitResumes),
    followLimitResumes: on(followLimitResumes),
    resumeAfterLimit: on(resumeAfterLimit),
    failOverLimited: on(failOverLimited),
    // Runs settling background work: their bound, its change feed and the settle when it passes (docs/runs.md).
    settlingRuns: on(settlingRuns),
    followSettlingRuns: on(followSettlingRuns),
    settleTimedOut: on(settleTimedOut),

    // Live guest share: the owner's operations, then the guest's (docs/guest-share.md).
    openGuestShare: on(openGuestShare),
    closeGuestShare: on(closeGuestShare),
    readGuestShare: on(readGuestShare),
    readGuestAttachment: on(readGuestAttachment),
    listGuestMessages: on(listGuestMessages),
    sendGuestMessage: on(sendGuestMessage),
    dismissGuestMessage: on(dismissGuestMessage),
    redeemGuestLink: on(redeemGuestLink),
    readGuestView: on(readGuestView),
    submitGuestMessage: on(submitGuestMessage),
    followGuestView: on(followGuestView),

    // Sessions and providers.
    listSessions: on(listSessions),
    releaseSession: on(releaseSession),
    listProviderSetup: () => listProviderSetup(catalog()),
    searchAcpAgents: (input: Parameters<typeof searchAcpAgents>[1]) => searchAcpAgents(catalog(), input),
    prepareAcpAgent: (input: Parameters<typeof prepareAcpAgent>[1]) => prepareAcpAgent(catalog(), input),
  };
}
