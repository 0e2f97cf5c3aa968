import type { Command } from "../../contracts/commands.js";
import { interactionModeRank, runtimeModeRank } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import { type Rejected, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { type CeilingTarget, ceilingBound } from "./ceilingTargets.js";

/**
 * The privilege ceiling (DESIGN invariant 9; spec 000, Policy And
 * Idempotency): no thread a command starts, changes or creates may have a
 * runtime or interaction mode broader than its caller's. The caller's modes
 * are read from the state when the command is decided, never from a copy the
 * command brings, so a caller narrowed a moment ago is bound by its new modes
 * and one deleted since is refused. The decider asks this before any command
 * of its own family runs; app functions that send several commands for one
 * request ask it first for each, so a refused request writes nothing.
 */
export function ceilingRejection(state: OrchestrationState, command: Command): Rejected | null {
  const bound = ceilingBound(state, command);
  if (bound === null || bound.ceiling === "none") return null;
  const callerId = bound.ceiling.callerThreadId;
  const caller = state.threads.get(callerId);
  if (caller === undefined) return reject(RejectionCode.threadNotFound, `the calling thread ${callerId} does not exist`);
  if (caller.deletedAt !== null) return reject(RejectionCode.threadDeleted, `the calling thread ${callerId} was deleted`);
  for (const target of bound.targets) {
    const refused = escalation(caller, target);
    if (refused !== null) return refused;
  }
  return null;
}

/** The refusal for a target broader than the caller in either mode, saying which mode is broader than which; null when it is within. */
function escalation(caller: AppThread, target: CeilingTarget): Rejected | null {
  if (runtimeModeRank(target.runtimeMode) > runtimeModeRank(caller.runtimeMode)) {
    return reject(
      RejectionCode.runtimeModeEscalationDenied,
      `runtime mode ${target.runtimeMode} of ${target.subject} is broader than the calling thread ${caller.id}'s ${caller.runtimeMode}`,
    );
  }
  if (interactionModeRank(target.interactionMode) > interactionModeRank(caller.interactionMode)) {
    return reject(
      RejectionCode.interactionModeEscalationDenied,
      `interaction mode ${target.interactionMode} of ${target.subject} is broader than the calling thread ${caller.id}'s ${caller.interactionMode}`,
    );
  }
  return null;
}
