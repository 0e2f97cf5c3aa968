import type { LimitRecoveryFailOverCommand } from "../../contracts/commands/failoverCommands.js";
import type { Ceiling } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import { joinId } from "../../core/ids.js";
import { threadProvider } from "../../core/run/lifecycle.js";
import type { ProviderAvailability } from "../../providers/registry.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";
import { AppError, fail } from "../errors.js";
import { availableProvider } from "../policy.js";

/**
 * Failover (docs/limits.md, "Failover"): where a thread a usage limit
 * stopped may go on at once, and the command that moves it. The candidates,
 * in order, are the delegation's `target.fallbacks` (a delegated child),
 * then the `failover` list of the instance it ran on; the first that is
 * available and offers the thread's runtime mode takes the work (the mode
 * stays the thread's: privilege never widens).
 */

type Trigger = LimitRecoveryFailOverCommand["data"]["trigger"];

interface Candidate {
  readonly providerInstanceId: string;
  readonly model: string | null;
}

/** The thread's failover candidates in order, its own instance left out. */
export function failoverCandidates(ctx: AppContext, thread: AppThread): Candidate[] {
  const state = ctx.orchestrator.state;
  const current = threadProvider(thread);
  const taskId = state.taskByChildThread.get(thread.id);
  const fromTask = (taskId === undefined ? undefined : state.tasks.get(taskId)?.fallbacks) ?? [];
  const configured = current === null ? [] : (ctx.registry.instance(current)?.failover ?? []);
  const seen = new Set<string>(current === null ? [] : [current]);
  const candidates: Candidate[] = [];
  for (const candidate of [...fromTask, ...configured.map((providerInstanceId) => ({ providerInstanceId, model: null }))]) {
    if (seen.has(candidate.providerInstanceId)) continue;
    seen.add(candidate.providerInstanceId);
    candidates.push(candidate);
  }
  return candidates;
}

/** Why a candidate cannot take the thread's work now, or null when it can. */
function unfit(availability: ProviderAvailability | null, id: string, thread: AppThread): string | null {
  if (availability === null) return `${id} is not a configured provider instance`;
  if (!availability.available) return `${id} is unavailable: ${availability.reason ?? "unknown reason"}`;
  const modes = availability.capabilities?.runtimeModes;
  if (modes !== undefined && !modes.includes(thread.runtimeMode)) return `${id} does not offer the thread's runtime mode ${thread.runtimeMode}`;
  return null;
}

/** The first candidate that can take the work (with the model to use there), or the reasons none can. */
async function pick(ctx: AppContext, thread: AppThread): Promise<{ chosen: Candidate | null; passed: string[] }> {
  const passed: string[] = [];
  for (const candidate of failoverCandidates(ctx, thread)) {
    const availability = await ctx.registry.get(candidate.providerInstanceId);
    const why = unfit(availability, candidate.providerInstanceId, thread);
    if (why !== null) {
      passed.push(why);
      continue;
    }
    return { chosen: { providerInstanceId: candidate.providerInstanceId, model: candidate.model ?? availability!.models[0] ?? null }, passed };
  }
  return { chosen: null, passed };
}

function failOverCommand(thread: AppThread, to: Candidate, trigger: Trigger, ceiling: Ceiling | undefined): LimitRecoveryFailOverCommand {
  const recovery = thread.limitRecovery!;
  return {
    type: "thread.limit-recovery.fail-over",
    // Derived from the recovery it ends: a retry, a restart or a second node sends the same command once.
    commandId: joinId("limit-failover", thread.id, recovery.runId, recovery.resetAt),
    data: { threadId: thread.id, runId: recovery.runId, resetAt: recovery.resetAt, providerInstanceId: to.providerInstanceId, model: to.model, trigger, ...(ceiling === undefined ? {} : { ceiling }) },
  };
}

/**
 * "Switch now": move a thread that waits on a usage limit to `to` (an
 * available instance offering the thread's runtime mode) or to its first
 * available failover candidate, and continue its work there. Refused with
 * invalid_request when the thread waits on no limit, provider_unavailable
 * (every candidate's reason) when none can take it.
 */
export async function failOverNow(ctx: AppContext, thread: AppThread, to: string | undefined, ceiling: Ceiling | undefined): Promise<{ providerInstanceId: string; commandId: string; sequence: number }> {
  if ((thread.limitRecovery ?? null) === null) fail("invalid_request", `thread ${thread.id} is not waiting on a usage limit: move it with providerInstanceId alone`);
  let target: Candidate;
  if (to !== undefined) {
    const availability = await availableProvider(ctx.registry, to);
    const why = unfit(availability, to, thread);
    if (why !== null) fail("provider_unavailable", why);
    target = { providerInstanceId: to, model: availability.models[0] ?? null };
  } else {
    const { chosen, passed } = await pick(ctx, thread);
    if (chosen === null) {
      fail("provider_unavailable", passed.length === 0 ? `thread ${thread.id} has no failover instance: name one with providerInstanceId, or configure the instance's failover list` : passed.join("; "));
    }
    target = chosen;
  }
  const executed = await execute(ctx, failOverCommand(thread, target, "requested", ceiling));
  return { providerInstanceId: target.providerInstanceId, commandId: executed.receipt.commandId, sequence: executed.receipt.sequence };
}

/**
 * The automatic failover: every thread a usage limit stopped whose resume
 * is still to come moves to its first available candidate. Called whenever
 * a recovery is recorded (on any node: the command is derived from the
 * recovery, and the decider refuses one already ended). A thread with no
 * candidate available waits for the reset. Returns the threads moved.
 */
export async function failOverLimited(ctx: AppContext, log: (line: string) => void = () => undefined): Promise<string[]> {
  const moved: string[] = [];
  for (const thread of ctx.orchestrator.state.threads.values()) {
    const recovery = thread.limitRecovery ?? null;
    if (recovery === null || thread.deletedAt !== null || !recovery.autoResume) continue;
    if (failoverCandidates(ctx, thread).length === 0) continue;
    const { chosen } = await pick(ctx, thread);
    if (chosen === null) continue;
    const latest = ctx.orchestrator.state.threads.get(thread.id);
    if (latest?.limitRecovery?.runId !== recovery.runId) continue;
    try {
      await execute(ctx, failOverCommand(latest, chosen, "automatic", undefined));
      moved.push(thread.id);
    } catch (error) {
      if (error instanceof AppError && error.rejectionCode === "limit_recovery_stale") continue;
      log(`loom: failover of ${thread.id} to ${chosen.providerInstanceId} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return moved;
}
