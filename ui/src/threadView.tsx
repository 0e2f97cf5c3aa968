import { useEffect, useMemo, useRef, useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import { type Run, isTerminalRunStatus } from "../../src/contracts/entities/runs.js";
import type { CapabilitiesOutput } from "../../src/contracts/tools/threadTools.js";
import type { SearchHitView } from "../../src/contracts/tools/searchTools.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import type { TurnItem } from "../../src/contracts/turnItems.js";
import { dispatch } from "./api.js";
import { DeleteAction } from "./deleteAction.js";
import { GuestMessages, GuestShareAction } from "./guestShareAction.js";
import { LimitBanner } from "./limitBanner.js";
import { Composer, modeBlocked } from "./composer.js";
import { DiffPanel, type DiffTarget } from "./diffPanel.js";
import { QueuePanel, queuedEntries } from "./queuePanel.js";
import { RunsList } from "./runsList.js";
import { RollbackDialog, type RollbackTarget } from "./rollbackDialog.js";
import { isTyping } from "./shortcuts.js";
import { Badge } from "./sidebar.js";
import { BudgetView } from "./budgetView.js";
import { CommandOutput } from "./commandOutput.js";
import { type StatusWord, statusWords } from "./statusWords.js";
import { MergeAction } from "./mergeAction.js";
import { PullRequestAction } from "./pullRequestAction.js";
import { ThreadActions } from "./threadActions.js";
import { ThreadSearch } from "./threadSearch.js";
import { badgeOf, badgeOfRunStatus, withWorkingChildren } from "./status.js";
import { useStore } from "./store.js";
import type { ItemContext } from "./timelineItems.js";
import { type JumpTarget, TimelineList } from "./timelineList.js";
import { type LiveOutput, ThreadStore, activeRun } from "./threadStore.js";

/** The lineage from the root down to this thread, from the shell rows. */
function lineage(threads: ReadonlyMap<string, ThreadShell>, threadId: string): ThreadShell[] {
  const chain: ThreadShell[] = [];
  let current = threads.get(threadId);
  while (current !== undefined && chain.length < 50) {
    chain.unshift(current);
    current = current.parentThreadId === null ? undefined : threads.get(current.parentThreadId);
  }
  return chain;
}

export function ThreadView(props: {
  readonly client: LoomWsClient;
  readonly threadId: string;
  readonly threads: ReadonlyMap<string, ThreadShell>;
  readonly providers: CapabilitiesOutput["providers"];
  readonly open: (threadId: string) => void;
  /** Open the waterfall of the tree with this root. */
  readonly openWaterfall: (rootThreadId: string) => void;
  /** A search hit to scroll to. */
  readonly jumpTo: JumpTarget | null;
  /** Open a search hit's thread at its item. */
  readonly jump: (hit: SearchHitView) => void;
}) {
  const { client, threadId } = props;
  const store = useMemo(() => new ThreadStore(client, threadId), [client, threadId]);
  useEffect(() => {
    store.start();
    // Opening a thread marks it read.
    dispatch(client, "thread.visit", { threadId }).catch(() => undefined);
    return () => store.stop();
  }, [store, client, threadId]);
  // The reader is looking: what arrives while the thread is open is read (a run ending here leaves no unread mark).
  const unreadWhileOpen = props.threads.get(threadId)?.unread === true;
  useEffect(() => {
    if (unreadWhileOpen) dispatch(client, "thread.visit", { threadId }).catch(() => undefined);
  }, [unreadWhileOpen, client, threadId]);
  const state = useStore(store);
  const scroller = useRef<HTMLDivElement>(null);
  const [diffTarget, setDiffTarget] = useState<DiffTarget | null>(null);
  const [rollbackTarget, setRollbackTarget] = useState<RollbackTarget | null>(null);

  // `a` / `d` answer the first pending approval (the one marked in the timeline), unless the reader is typing.
  const keyTarget = useMemo(() => state.items.find((item) => item.type === "approval_request" && item.status === "pending") ?? null, [state.items]);
  useEffect(() => {
    if (keyTarget === null || keyTarget.type !== "approval_request") return;
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || (e.key !== "a" && e.key !== "d") || document.querySelector("[role=dialog]") !== null) return;
      e.preventDefault();
      dispatch(client, "runtime-request.respond", { threadId, requestId: keyTarget.requestId, response: { decision: e.key === "a" ? "accept" : "decline" } }).catch(() => undefined);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [keyTarget, client, threadId]);

  const ctx: ItemContext = useMemo(
    () => ({
      deltas: state.deltas,
      outputs: state.outputs,
      openThread: props.open,
      respond: (requestId, response) => dispatch(client, "runtime-request.respond", { threadId, requestId, response }),
      showTurnDiff: (runId, label) => setDiffTarget({ runId, label }),
      askRollback: setRollbackTarget,
      keyTarget: keyTarget?.id ?? null,
      threads: props.threads,
      stopWorkflow: (workflowId) => client.request("orchestration.stopWorkflow", { workflowId }),
    }),
    [state.deltas, state.outputs, props.open, client, threadId, keyTarget, props.threads],
  );

  if (state.phase === "failed") return <div className="pad error-text">Could not open {threadId}: {state.error}</div>;
  if (state.phase === "deleted") return <div className="pad muted">This thread was deleted.</div>;
  if (state.thread === null) return <div className="pad muted">Loading…</div>;

  const thread = state.thread;
  const latest = activeRun(state);
  const live = latest !== null && !isTerminalRunStatus(latest.status);
  // Stop also stops the workflows the thread runs, so it is offered while one is going even when the thread is idle.
  const workflowRunning = state.items.some((item) => item.type === "dynamic_tool" && item.toolName === "t3_workflow" && item.status === "in_progress");
  const stoppable = live || workflowRunning;
  const provider = props.providers.find((p) => p.providerInstanceId === thread.providerInstanceId);
  const itemStreams = new Set(state.items.flatMap((item) => (item.type === "command_execution" && item.outputStreamId !== null ? [item.outputStreamId] : [])));
  const pendingOutputs = [...state.outputs.values()].filter((o) => !itemStreams.has(o.outputStreamId));
  const chain = lineage(props.threads, threadId);
  // The turn in flight's status; the shell row knows when that agent is blocked in a wait, and its children's rows whether they still work.
  const runBadge = badgeOfRunStatus(latest?.status ?? null);
  const ownBadge = runBadge === "running" && props.threads.get(threadId)?.inWait === true ? "waiting-children" : runBadge;
  const childBadges = [...props.threads.values()].filter((other) => other.parentThreadId === threadId).map((other) => badgeOf(other));
  const headBadge = withWorkingChildren(ownBadge, childBadges);

  return (
    <div className="thread-view">
      <header className="thread-head">
        <nav className="breadcrumb" aria-label="Lineage">
          {chain.slice(0, -1).map((row) => (
            <span key={row.id}>
              <a href={`/t/${encodeURIComponent(row.id)}`} onClick={(e) => { e.preventDefault(); props.open(row.id); }}>
                {row.title || row.id}
              </a>{" "}
              ›{" "}
            </span>
          ))}
        </nav>
        <h2>{thread.title || "(untitled)"}</h2>
        <div className="thread-meta">
          <Badge kind={headBadge} />
          <span className="pill">{thread.providerInstanceId ?? "no provider"}</span>
          {thread.modelSelection?.model ? <span className="pill">{thread.modelSelection.model}</span> : null}
          <span className="pill">{thread.runtimeMode}</span>
          <span className="pill">{thread.interactionMode}</span>
          {thread.branch ? (
            <span className="pill branch-chip" data-testid="branch" title={thread.worktreePath === null ? `branch ${thread.branch}` : `branch ${thread.branch} in the worktree ${thread.worktreePath}`}>
              ⎇ {thread.branch}
            </span>
          ) : null}
          {(thread.workspace?.overlaps ?? []).map((overlap) => {
            const sibling = props.threads.get(overlap.threadId)?.title || overlap.threadId;
            return (
              <a
                key={overlap.threadId}
                className="pill overlap-chip"
                data-testid="overlap"
                href={`/t/${encodeURIComponent(overlap.threadId)}`}
                title={`"${sibling}", a sibling in a worktree of its own, changed the same files: ${overlap.files.join(", ")}. Their changes meet when both are merged.`}
                onClick={(e) => {
                  e.preventDefault();
                  props.open(overlap.threadId);
                }}
              >
                ⚠ overlaps {sibling}: {overlap.files.length === 1 ? overlap.files[0] : `${overlap.files.length} files`}
              </a>
            );
          })}
          <span className="spacer" />
          <button onClick={() => props.openWaterfall(thread.lineage.rootThreadId)} title="Every thread of this tree and its runs over time">
            Waterfall
          </button>
          <button onClick={() => setDiffTarget({ runId: null, label: "Changes of the whole thread" })} title="Everything this thread changed in its workspace">
            Thread diff
          </button>
          <ThreadActions client={client} threadId={threadId} row={props.threads.get(threadId)} />
          {thread.branch && thread.lineage.parentThreadId !== null ? (
            <MergeAction
              key={threadId}
              threadId={threadId}
              parentTitle={props.threads.get(thread.lineage.parentThreadId)?.title ?? "the parent"}
              resolverInstanceId={thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId ?? null}
              open={props.open}
            />
          ) : null}
          {thread.branch ? <PullRequestAction threadId={threadId} base={thread.lineage.parentThreadId === null ? null : "the parent's branch"} /> : null}
          <button onClick={() => archiveSubtree(client, thread.title, threadId, thread.archivedAt === null, props.threads)}>{thread.archivedAt === null ? "Archive" : "Unarchive"}</button>
          <GuestShareAction threadId={threadId} share={thread.guestShare ?? null} />
          <DeleteAction client={client} threadId={threadId} title={thread.title} />
          <button
            className="danger"
            disabled={!stoppable}
            onClick={() => void dispatch(client, "thread.stop", { threadId }).catch(() => undefined)}
            title={stoppable ? "Stop the thread: interrupt its run, hold its queue, and stop the workflows it runs" : "Nothing to stop: no run or workflow of this thread is going"}
          >
            Stop
          </button>
        </div>
        <div className="thread-tools">
          <ThreadSearch client={client} threadId={threadId} jump={props.jump} />
          <RunsList runs={state.runs} />
        </div>
        {thread.limitRecovery ? <LimitBanner threadId={threadId} recovery={thread.limitRecovery} current={thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId} providers={props.providers} /> : null}
        <GuestMessages threadId={threadId} share={thread.guestShare ?? null} />
        <BudgetView threadId={threadId} version={[...state.runs.values()].map((run) => `${run.id}:${run.status}`).join(",")} />
      </header>
      {diffTarget !== null ? <DiffPanel key={diffTarget.runId ?? "thread"} client={client} threadId={threadId} target={diffTarget} close={() => setDiffTarget(null)} open={props.open} /> : null}
      <div className="timeline" ref={scroller} data-testid="timeline">
        <TimelineList
          items={state.items}
          ctx={ctx}
          historyCursor={state.historyCursor}
          loadOlder={() => store.loadOlder()}
          scroller={scroller}
          jumpTo={props.jumpTo}
          footer={
            <>
              {pendingOutputs.map((o) => {
                const command = o.command ?? commandOf(state.items, o.itemId);
                const status = liveOutputStatus(o, state.runs.get(o.runId));
                return (
                  <div key={o.outputStreamId} className="item item-command_execution live-output" data-kind="live-output">
                    <div className="item-head">
                      <span className="item-title">{command === null ? "Running command" : <code>$ {command}</code>}</span>
                      <span className={`pill pill-${status === "running" || status === "finishing" ? "in_progress" : status}`}>{statusWords(status)}</span>
                    </div>
                    <CommandOutput text={o.text} />
                  </div>
                );
              })}
              {latest !== null && (latest.status === "running" || latest.status === "starting") ? <div className="working muted">Working…</div> : null}
            </>
          }
        />
      </div>
      <QueuePanel client={client} threadId={threadId} entries={queuedEntries(state.runs, state.items)} steerBlocked={modeBlocked("steer", provider, live && latest.status === "running")} />
      <Composer client={client} threadId={threadId} provider={provider} live={live} />
      {rollbackTarget !== null ? <RollbackDialog client={client} threadId={threadId} target={rollbackTarget} close={() => setRollbackTarget(null)} /> : null}
    </div>
  );
}

/** The command line of the loaded item a live output belongs to, for a provider that did not tell it with the output. */
function commandOf(items: readonly TurnItem[], itemId: string): string | null {
  const item = items.find((candidate) => candidate.id === itemId);
  return item?.type === "command_execution" ? item.command : null;
}

/** A live output's word: running, finishing once its stream ended, or its run's terminal status when the run ended without the command's item. */
function liveOutputStatus(output: LiveOutput, run: Run | undefined): StatusWord {
  if (!output.ended) return "running";
  return run !== undefined && isTerminalRunStatus(run.status) ? run.status : "finishing";
}

/** The threads below `threadId` (subagents and forks at any depth) that archiving, or unarchiving, the thread moves with it. */
export function movedWith(threads: ReadonlyMap<string, ThreadShell>, threadId: string, archiving: boolean): number {
  let count = 0;
  const below = (parentId: string, depth: number): void => {
    if (depth > 64) return;
    for (const row of threads.values()) {
      if (row.parentThreadId !== parentId) continue;
      if (row.archived !== archiving) count += 1;
      below(row.id, depth + 1);
    }
  };
  below(threadId, 0);
  return count;
}

/** Archive or unarchive a thread with its subtree, asking first when threads under it move too. */
function archiveSubtree(client: LoomWsClient, title: string, threadId: string, archiving: boolean, threads: ReadonlyMap<string, ThreadShell>): void {
  const count = movedWith(threads, threadId, archiving);
  const verb = archiving ? "Archive" : "Unarchive";
  if (count > 0 && !window.confirm(`${verb} "${title}" and the ${count} thread${count === 1 ? "" : "s"} under it?`)) return;
  void dispatch(client, archiving ? "thread.archive" : "thread.unarchive", { threadId }).catch(() => undefined);
}
