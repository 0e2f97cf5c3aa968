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

/**
 * Whose privilege bounds a command (DESIGN invariant 9; spec 000, Policy And
 * Idempotency): a calling thread, whose runtime and interaction modes as the
 * state holds them when the command is decided are the most any thread the
 * command starts, changes or creates may have; or "none", for the owner and
 * the server's own commands. A command without one is "none": only the owner
 * sends raw commands (src/core/policy/ceiling.ts decides it).
 */
export const CeilingSchema = z.union([z.literal("none"), z.object({ callerThreadId: z.string().min(1).max(512) }).strict()]);
export type Ceiling = z.infer<typeof CeilingSchema>;
