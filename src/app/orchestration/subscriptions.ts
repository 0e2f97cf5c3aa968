import type { StoredEvent } from "../../contracts/envelopes.js";
import type { AppThread } from "../../contracts/thread.js";
import type { CommandOutputUpdate, ShellStreamUpdate, ThreadStreamUpdate } from "../../contracts/wire/projections.js";
import type { OrchestrationState } from "../../core/state.js";
import { type ShellOptions, shellRowOf, shellSnapshot } from "../../engine/projections.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { boundedSnapshot, liveThread } from "./threadViews.js";

/**
 * The live subscriptions of the wire. Each starts from a snapshot read at a
 * settled point (Orchestrator.readCommitted) and follows the log from the
 * snapshot's sequence (Orchestrator.follow), so every later change arrives
 * exactly once and in order with no gap at the switch. A client that gives
 * the last sequence it saw resumes from there without a snapshot while the
 * log still holds the events after it (it always does: Loom's log is never
 * truncated) and the gap is at most MAX_RESUME_GAP events.
 */

/** Where a subscription's updates go. The transport turns a failure into the wire Failure. */
export interface StreamSink<U> {
  next(update: U): void;
  /** The stream ended on its own (a deleted thread, a finished command). */
  complete(): void;
  /** The stream ended with a failure after it started (the transport sends the wire Failure). */
  fail(error: unknown): void;
}

export interface StreamHandle {
  /** Stop delivery at once. Idempotent. */
  close(): void;
}

/** A resume further back than this many events starts from a fresh snapshot instead. */
export const MAX_RESUME_GAP = 100_000;

function canResume(state: Readonly<OrchestrationState>, afterSequence: number | undefined): afterSequence is number {
  return afterSequence !== undefined && afterSequence <= state.lastSequence && state.lastSequence - afterSequence <= MAX_RESUME_GAP;
}

/** orchestration.subscribeThread: a bounded snapshot (or a resume), then the thread's events and live streaming. */
export async function subscribeThread(
  ctx: AppContext,
  _caller: Caller,
  params: { readonly threadId: string; readonly afterSequence?: number; readonly turnItemLimit?: number },
  sink: StreamSink<ThreadStreamUpdate>,
): Promise<StreamHandle> {
  const { orchestrator } = ctx;
  const { threadId } = params;
  const start = await orchestrator.readCommitted((state) => {
    liveThread(state, threadId);
    if (canResume(state, params.afterSequence)) return { after: params.afterSequence, update: { kind: "resumed", afterSequence: params.afterSequence } as const };
    const snapshot = boundedSnapshot(state, orchestrator.timeline, threadId, params.turnItemLimit);
    return { after: snapshot.snapshotSequence, update: { kind: "snapshot", snapshot } as const };
  });
  let closed = false;
  sink.next(start.update);
  // Commands already streaming are announced first; later ones as they start.
  for (const running of orchestrator.liveChannel.runningOutputs(threadId)) sink.next({ kind: "output", ...running });
  const stopLive = orchestrator.liveChannel.subscribeThread(threadId, (message) => {
    if (message.kind === "delta") sink.next({ kind: "delta", runId: message.runId, itemId: message.itemId, text: message.text });
    else sink.next({ kind: "output", runId: message.runId, itemId: message.itemId, outputStreamId: message.outputStreamId, command: message.command });
  });
  const handle: StreamHandle = {
    close() {
      if (closed) return;
      closed = true;
      stopLive();
      subscription.close();
    },
  };
  const end = () => {
    handle.close();
    sink.complete();
  };
  // The command that deleted the thread may commit more of it after thread.deleted (the end of a
  // run it stopped while preparing): the stream completes after that command's last event.
  interface Deletion {
    readonly commandId: string;
    /** The sequence of the command's last event, once its receipt is read. */
    through: number | null;
  }
  let deletion: Deletion | null = null;
  let seen = start.after;
  const subscription = orchestrator.follow(start.after, (event) => {
    if (closed) return;
    // A command's events are contiguous: an event of another command means the deleting one is over.
    if (deletion !== null && event.commandId !== deletion.commandId) {
      end();
      return;
    }
    seen = event.sequence;
    if (event.streamId === threadId) sink.next({ kind: "event", event: wireEvent(event) });
    if (deletion !== null && deletion.through !== null && seen >= deletion.through) {
      end();
      return;
    }
    if (event.type === "thread.deleted" && event.streamId === threadId) {
      const pending: Deletion = { commandId: event.commandId, through: null };
      deletion = pending;
      orchestrator.receiptOf(event.commandId).then(
        (receipt) => {
          if (closed) return;
          pending.through = receipt?.status === "accepted" ? receipt.sequence : seen;
          if (seen >= pending.through) end();
        },
        // The store closed under the lookup: the stream cannot go on either.
        () => {
          if (!closed) end();
        },
      );
    }
  });
  return handle;
}

/** orchestration.subscribeShell and subscribeArchivedShell: the thread list, then its rows as they change. */
export async function subscribeShell(
  ctx: AppContext,
  _caller: Caller,
  params: { readonly afterSequence?: number; readonly omitIdleSubagents?: boolean; readonly archivedOnly?: boolean },
  sink: StreamSink<ShellStreamUpdate>,
): Promise<StreamHandle> {
  const { orchestrator } = ctx;
  const options: ShellOptions = { archivedOnly: params.archivedOnly === true, omitIdleSubagents: params.omitIdleSubagents === true };
  // What the client holds: the last row sent per thread (null: unknown, after a resume).
  const sent = new Map<string, string>();
  let resumed = false;
  const start = await orchestrator.readCommitted((state) => {
    if (canResume(state, params.afterSequence)) {
      resumed = true;
      return { after: params.afterSequence, update: { kind: "resumed", afterSequence: params.afterSequence } as const };
    }
    const snapshot = shellSnapshot(state, options);
    for (const row of snapshot.threads) sent.set(row.id, JSON.stringify(row));
    return { after: snapshot.snapshotSequence, update: { kind: "snapshot", snapshot } as const };
  });
  sink.next(start.update);
  const subscription = orchestrator.follow(start.after, (event) => {
    const thread = threadOfShellEvent(orchestrator.state, event);
    if (thread === undefined) return;
    // Rows are computed from the state as it is now, so they converge on the current list.
    const row = shellRowOf(orchestrator.state, thread, options);
    if (row === null) {
      if (sent.delete(thread.id) || resumed) sink.next({ kind: "remove", sequence: event.sequence, threadId: thread.id });
      return;
    }
    const text = JSON.stringify(row);
    if (sent.get(row.id) === text) return;
    sent.set(row.id, text);
    sink.next({ kind: "upsert", sequence: event.sequence, thread: row });
  });
  return { close: () => subscription.close() };
}

/** The thread whose shell row an event may change: thread events, run events (a cancelled background task included), execution nodes (a recorded wait opening or closing) and its workflows; others change no row. */
function threadOfShellEvent(state: Readonly<OrchestrationState>, event: StoredEvent): AppThread | undefined {
  if (event.type.startsWith("thread.") || event.type.startsWith("workflow.") || event.type === "run.created" || event.type === "run.updated" || event.type === "run.background-work-cancelled" || event.type === "node.updated") {
    return state.threads.get(event.streamId);
  }
  return undefined;
}

/**
 * orchestration.subscribeCommandOutput: the retained tail of a command's
 * output, then every later chunk, completing when the command ends. A
 * command that is no longer live answers with its recorded preview.
 */
export function subscribeCommandOutput(
  ctx: AppContext,
  _caller: Caller,
  params: { readonly threadId: string; readonly outputStreamId: string; readonly fromOffset?: number },
  sink: StreamSink<CommandOutputUpdate>,
): StreamHandle {
  const { orchestrator } = ctx;
  liveThread(orchestrator.state, params.threadId);
  const followed = orchestrator.liveChannel.followOutput(params.outputStreamId, params.fromOffset ?? 0, (event) => {
    if (event.kind === "chunk") sink.next({ kind: "chunk", offset: event.offset, text: event.text });
    else sink.complete();
  });
  if (followed !== null) {
    if (followed.tail.threadId !== params.threadId) {
      followed.close();
      fail("invalid_request", `output stream ${params.outputStreamId} does not belong to thread ${params.threadId}`);
    }
    const { offset, text, truncated, ended } = followed.tail;
    sink.next({ kind: "tail", source: "live", offset, text, truncated, ended });
    if (ended) sink.complete();
    return { close: () => followed.close() };
  }
  const item = orchestrator.timeline
    .items(params.threadId, { types: ["command_execution"], order: "desc" })
    .find((candidate) => candidate.type === "command_execution" && candidate.outputStreamId === params.outputStreamId);
  if (item?.type !== "command_execution") {
    fail("invalid_request", `thread ${params.threadId} has no command output stream ${params.outputStreamId} (its command has not written output yet, or never had this stream)`);
  }
  sink.next({ kind: "tail", source: "preview", offset: 0, text: item.outputPreview, truncated: item.outputTruncated, ended: true });
  sink.complete();
  return { close: () => undefined };
}

/** One wire shape per stored event, shared by every subscription it fans out to (so its frame is serialized once: api/streamFrames.ts). */
const wireEvents = new WeakMap<StoredEvent, { sequence: number; type: string; data: unknown; occurredAt: string }>();

export function wireEvent(event: StoredEvent): { sequence: number; type: string; data: unknown; occurredAt: string } {
  let shaped = wireEvents.get(event);
  if (shaped === undefined) {
    shaped = { sequence: event.sequence, type: event.type, data: event.data, occurredAt: event.occurredAt };
    wireEvents.set(event, shaped);
  }
  return shaped;
}
