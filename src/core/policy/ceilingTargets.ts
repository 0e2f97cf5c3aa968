import type { Command } from "../../contracts/commands.js";
import type { DelegatedTaskRequestCommand } from "../../contracts/commands/delegationCommands.js";
import type { Ceiling, InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../state.js";
import { NEW_THREAD_MODES, liveDescendants } from "../thread/lifecycle.js";

/**
 * What the privilege ceiling bounds, command by command: whose modes are the
 * ceiling and every thread (or scheduled task) the command starts, changes or
 * creates, with the modes it has once the command is applied. A thread the
 * command changes counts as it is now too, so a caller cannot touch a thread
 * broader than itself (spec 000: "the same privilege ceiling as child
 * creation"). A target that does not exist is left out: the command's own
 * decider refuses it.
 */

/** One thing a command must keep within the ceiling. */
export interface CeilingTarget {
  /** How a refusal names it: "thread X", "the new thread X", ... */
  readonly subject: string;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
}

export interface CeilingBound {
  readonly ceiling: Ceiling;
  readonly targets: readonly CeilingTarget[];
}

/** Every command whose data carries a `ceiling`, and delegation, whose ceiling is always its parent thread. */
type WithCeiling<C> = C extends { readonly data: infer D } ? ("ceiling" extends keyof D ? C : never) : never;
export type CeilingCommand = WithCeiling<Command> | DelegatedTaskRequestCommand;
type CeilingCommandType = CeilingCommand["type"];
type BoundOf<K extends CeilingCommandType> = (state: OrchestrationState, command: Extract<CeilingCommand, { type: K }>) => CeilingBound;

function asTarget(subject: string, modes: { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode }): CeilingTarget {
  return { subject, runtimeMode: modes.runtimeMode, interactionMode: modes.interactionMode };
}

function liveThreadOf(state: OrchestrationState, threadId: string): AppThread | null {
  const thread = state.threads.get(threadId);
  return thread === undefined || thread.deletedAt !== null ? null : thread;
}

/** The thread as it is, when it exists. */
function current(state: OrchestrationState, threadId: string): CeilingTarget[] {
  const thread = liveThreadOf(state, threadId);
  return thread === null ? [] : [asTarget(`thread ${thread.id}`, thread)];
}

/** The thread as it is and as the change leaves it. */
function changedTo(state: OrchestrationState, threadId: string, change: Partial<Pick<AppThread, "runtimeMode" | "interactionMode">>): CeilingTarget[] {
  const thread = liveThreadOf(state, threadId);
  return thread === null ? [] : [asTarget(`thread ${thread.id}`, thread), asTarget(`thread ${thread.id} after the change`, { ...thread, ...change })];
}

/** A command that changes (or starts work in) the one thread it names. */
function onThread(state: OrchestrationState, command: { readonly data: { readonly threadId: string; readonly ceiling?: Ceiling } }): CeilingBound {
  return { ceiling: command.data.ceiling ?? "none", targets: current(state, command.data.threadId) };
}

/** Archive, unarchive and delete act on the thread and every live thread under it: each is held to the ceiling. */
function onSubtree(state: OrchestrationState, command: { readonly data: { readonly threadId: string; readonly ceiling?: Ceiling } }): CeilingBound {
  const below = liveThreadOf(state, command.data.threadId) === null ? [] : liveDescendants(state, command.data.threadId);
  return { ceiling: command.data.ceiling ?? "none", targets: [...current(state, command.data.threadId), ...below.map((thread) => asTarget(`thread ${thread.id} (under ${command.data.threadId})`, thread))] };
}

/** A reorder moves every thread it lists. */
function onThreads(state: OrchestrationState, command: { readonly data: { readonly threadIds: readonly string[]; readonly ceiling?: Ceiling } }): CeilingBound {
  return { ceiling: command.data.ceiling ?? "none", targets: command.data.threadIds.flatMap((threadId) => current(state, threadId)) };
}

/** A scheduled task's work: a run in its bound thread, or a fresh thread with the task's modes. */
function scheduledWork(state: OrchestrationState, scheduledTaskId: string): CeilingTarget[] {
  const task = state.scheduledTasks.get(scheduledTaskId);
  if (task === undefined) return [];
  return task.boundThreadId === null ? [asTarget(`scheduled task ${task.id}`, task)] : current(state, task.boundThreadId);
}

/** The one table: each command that can carry a caller, and what it bounds. Adding a `ceiling` field to a command makes the compiler ask for its row. */
const BOUND_OF: { readonly [K in CeilingCommandType]: BoundOf<K> } = {
  // New work
  "delegated_task.request": (_state, { data }) => ({
    ceiling: { callerThreadId: data.parentThreadId },
    targets: [asTarget(`the child thread ${data.childThreadId}`, data)],
  }),
  "thread.create": (_state, { data }) => ({
    ceiling: data.ceiling ?? "none",
    targets: [
      asTarget(data.threadId === undefined ? "the new thread" : `the new thread ${data.threadId}`, {
        runtimeMode: data.runtimeMode ?? NEW_THREAD_MODES.runtimeMode,
        interactionMode: data.interactionMode ?? NEW_THREAD_MODES.interactionMode,
      }),
    ],
  }),
  "thread.fork": (_state, { data }) => ({ ceiling: data.ceiling ?? "none", targets: [asTarget(`the fork ${data.threadId}`, data)] }),
  "message.dispatch": onThread,
  "scheduled-task.save": (state, { data }) => ({
    ceiling: data.ceiling ?? "none",
    targets: [asTarget(`scheduled task ${data.scheduledTaskId}`, data), ...(data.boundThreadId === null ? [] : current(state, data.boundThreadId))],
  }),
  "scheduled-task.fire": (state, { data }) => ({ ceiling: data.ceiling ?? "none", targets: scheduledWork(state, data.scheduledTaskId) }),
  // Reconfiguration
  "thread.runtime-mode.set": (state, { data }) => ({ ceiling: data.ceiling ?? "none", targets: changedTo(state, data.threadId, { runtimeMode: data.runtimeMode }) }),
  "thread.interaction-mode.set": (state, { data }) => ({ ceiling: data.ceiling ?? "none", targets: changedTo(state, data.threadId, { interactionMode: data.interactionMode }) }),
  "thread.model-selection.set": onThread,
  "provider.switch": onThread,
  "thread.limit-recovery.fail-over": onThread,
  // Other changes to a thread
  "thread.archive": onSubtree,
  "thread.unarchive": onSubtree,
  "thread.delete": onSubtree,
  "thread.settle": onThread,
  "thread.unsettle": onThread,
  "thread.auto-settle": onThread,
  "thread.auto-settle.set": onThread,
  "thread.snooze": onThread,
  "thread.unsnooze": onThread,
  "thread.visit": onThread,
  "thread.mark-unread": onThread,
  "thread.pin": onThread,
  "thread.unpin": onThread,
  "thread.pin.reorder": onThreads,
  "thread.active.reorder": onThreads,
  "thread.metadata.update": onThread,
  "thread.pull-request.link": onThread,
  "thread.pull-request.unlink": onThread,
  "run.interrupt": onThread,
  "queued-run.reorder": onThread,
  "queued-run.cancel": onThread,
  "queued-run.edit": onThread,
  "queued-message.promote-to-steer": onThread,
  "runtime-request.respond": onThread,
  "thread.user-input.dismiss": onThread,
  // The change lands in the thread a fork or child came from.
  "thread.merge_back": (state, { data }) => {
    const source = liveThreadOf(state, data.threadId)?.lineage.parentThreadId ?? null;
    return { ceiling: data.ceiling ?? "none", targets: source === null ? [] : current(state, source).map((target) => ({ ...target, subject: `the source ${target.subject}` })) };
  },
};

function isCeilingCommand(command: Command): command is CeilingCommand {
  return Object.hasOwn(BOUND_OF, command.type);
}

/** What the ceiling bounds for this command, or null for a command no caller can widen anything with. */
export function ceilingBound(state: OrchestrationState, command: Command): CeilingBound | null {
  if (!isCeilingCommand(command)) return null;
  // The table is total over CeilingCommand and each row takes its own command type; TypeScript cannot correlate the two through the union.
  const boundOf = BOUND_OF[command.type] as (state: OrchestrationState, command: CeilingCommand) => CeilingBound;
  return boundOf(state, command);
}
