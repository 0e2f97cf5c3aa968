import type { ProviderSwitchCommand } from "../../contracts/commands/lineageCommands.js";
import { type ContextHandoff, HandoffStrategy } from "../../contracts/entities/contextTransfers.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { activeRun, queuedRuns, threadProvider } from "../run/lifecycle.js";
import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "../thread/guards.js";
import { lastSeenOrdinal, putHandoffWithItem, unseenRuns } from "./context.js";

/**
 * provider.switch: the thread moves to another provider instance. The next
 * run goes there (runs still queued are re-targeted, since none of them has
 * started; an active run finishes where it is). When the target has not seen
 * every run, a pending context handoff is recorded, with a `handoff` item in
 * the timeline: `delta_since_target_last_seen` when the target worked on the
 * thread before, else `full_thread_summary`. Its transcript is built when the
 * target's first run starts, so it also covers runs that end in between. A
 * handoff still pending from an earlier switch is superseded.
 */
export function decideProviderSwitch(state: OrchestrationState, command: ProviderSwitchCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const target = command.data.providerInstanceId;
  const facts = ctx.providers(target);
  if (facts === null) return reject("provider_unavailable", `provider instance ${target} is not available`);
  const source = threadProvider(thread);
  if (source === target) {
    return reject("provider_unchanged", `thread ${thread.id} already runs on ${target}; change its model with thread.model-selection.set`);
  }
  const changes = new Changes(state, ctx);
  switchProvider(changes, thread, target, command.data.model ?? null, facts.driver);
  return changes.done();
}

/**
 * The thread moves to `target` within a decision (provider.switch, a
 * failover): queued runs re-targeted, an earlier pending handoff
 * superseded, and a pending handoff with its item when the target has not
 * seen every run.
 */
export function switchProvider(changes: Changes, thread: AppThread, target: string, model: string | null, driver: string): void {
  const ctx = changes.ctx;
  const source = threadProvider(thread);
  const now = ctx.now;
  const modelSelection = { providerInstanceId: target, model };
  changes.putThread("thread.provider-switched", changed(changes.thread(thread.id) ?? thread, ctx, { providerInstanceId: target, modelSelection }));
  for (const run of queuedRuns(changes, thread.id)) changes.updateRun(run, { providerInstanceId: target, driver, modelSelection });
  for (const handoff of changes.threadHandoffs(thread.id)) {
    if (handoff.status === "pending") putHandoffWithItem(changes, { ...handoff, status: "superseded", updatedAt: now });
  }
  const runs = changes.threadRuns(thread.id);
  const unseen = unseenRuns(runs, target);
  if (unseen.length === 0) return;
  const strategy = lastSeenOrdinal(runs, target) > 0 ? HandoffStrategy.deltaSinceTargetLastSeen : HandoffStrategy.fullThreadSummary;
  const handoff: ContextHandoff = {
    id: ctx.allocate.contextHandoff(),
    threadId: thread.id,
    sourceProviderInstanceId: source,
    targetProviderInstanceId: target,
    strategy,
    status: "pending",
    coveredRunOrdinals: { from: unseen[0]!.ordinal, to: unseen[unseen.length - 1]!.ordinal },
    summaryText: null,
    history: [],
    delivery: null,
    createdAt: now,
    updatedAt: now,
  };
  changes.putHandoff(handoff);
  changes.addItem(thread.id, activeRun(changes, thread.id)?.id ?? null, {
    type: "handoff",
    handoffId: handoff.id,
    fromProvider: source,
    toProvider: target,
    strategy,
    status: "pending",
  });
}

