import { z } from "zod";

/**
 * Runtime modes, narrowest first (spec 000, Policy And Idempotency). A target
 * may never run with a broader mode than the caller that created or changed it.
 */
export const RuntimeMode = {
  approvalRequired: "approval-required",
  autoAcceptEdits: "auto-accept-edits",
  fullAccess: "full-access",
} as const;
export type RuntimeMode = (typeof RuntimeMode)[keyof typeof RuntimeMode];
export const RUNTIME_MODES: readonly RuntimeMode[] = [
  RuntimeMode.approvalRequired,
  RuntimeMode.autoAcceptEdits,
  RuntimeMode.fullAccess,
];
export const RuntimeModeSchema = z.enum(["approval-required", "auto-accept-edits", "full-access"]);

/** Interaction modes, narrowest first: `plan` is narrower than `default`. */
export const InteractionMode = {
  plan: "plan",
  default: "default",
} as const;
export type InteractionMode = (typeof InteractionMode)[keyof typeof InteractionMode];
export const INTERACTION_MODES: readonly InteractionMode[] = [InteractionMode.plan, InteractionMode.default];
export const InteractionModeSchema = z.enum(["plan", "default"]);

/** Rank of a mode: a higher number grants more privilege. */
export function runtimeModeRank(mode: RuntimeMode): number {
  return RUNTIME_MODES.indexOf(mode);
}
export function interactionModeRank(mode: InteractionMode): number {
  return INTERACTION_MODES.indexOf(mode);
}
