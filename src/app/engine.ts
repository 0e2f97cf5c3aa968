import type { Command } from "../contracts/commands.js";
import type { AcceptedReceipt, CommandReceipt, Rejection, StoredEvent } from "../contracts/envelopes.js";
import type { OrchestrationState } from "../core/state.js";
import type { Dispatched } from "../engine/dispatcher.js";
import type { LiveChannel } from "../engine/liveChannel.js";
import type { ThreadIndex } from "../engine/threadIndex.js";
import type { Timeline } from "../engine/timeline.js";
import type { EventListener, Subscription } from "../store/eventStore.js";

/** The thread lists app functions read (t3_thread_list, shell pages). */
export type ThreadLists = Pick<ThreadIndex, "list" | "unarchived" | "pinned">;

/** Live streaming app functions subscribe to (assistant deltas, command output); publishing is the providers'. */
export type LiveStreams = Pick<LiveChannel, "subscribeThread" | "followOutput" | "runningOutputs">;

/**
 * What app functions use of the engine, and all they may: commands in,
 * committed reads and the one change feed out. The Orchestrator is one;
 * its life cycle (open, snapshots, close), its log syncing and the outbox
 * wake-up stay with whoever composes the server.
 */
export interface Engine {
  /** The folded state as of the last commit. Never mutated here: commands change it. */
  readonly state: Readonly<OrchestrationState>;
  /** Threads' turn items: read them here, not from the state's maps. */
  readonly timeline: Timeline;
  readonly threads: ThreadLists;
  readonly liveChannel: LiveStreams;
  /** Decide and commit a command; resolves with its receipt. */
  dispatch(command: Command): Promise<CommandReceipt>;
  /** What the decider would answer `command` now, recording nothing: its rejection, or null (dry runs). */
  check(command: Command): Rejection | null;
  /** Like dispatch, and hands back the events the command wrote. */
  execute(command: Command): Promise<Dispatched>;
  /** A command's stored receipt, or null when the log has none. */
  receiptOf(commandId: string): Promise<CommandReceipt | null>;
  /** The events an accepted command wrote, read back from the log (a repeated commandId gets them too). */
  eventsOf(receipt: AcceptedReceipt): Promise<readonly StoredEvent[]>;
  /** Read the state where it holds exactly the committed log up to its `lastSequence`: the start of a snapshot-then-follow view. */
  readCommitted<T>(read: (state: Readonly<OrchestrationState>) => T): Promise<T>;
  /** The one change feed: every committed event after `after`, this node's and every other's, once and in order, after the state has it. */
  follow(after: number, listener: EventListener): Subscription;
}
