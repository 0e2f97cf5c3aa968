import { fail } from "../errors.js";

/**
 * The features some wire methods need that this server does not have yet.
 * Each is being built elsewhere; until its app function lands, its methods
 * answer the `unsupported` failure (retryable: false), listed in docs/wire.md.
 */
export const PENDING_FEATURES = {
  workflows: "workflows are not part of this server yet",
} as const;
export type PendingFeature = keyof typeof PENDING_FEATURES;

export function notYetSupported(method: string, feature: PendingFeature): never {
  fail("unsupported", `${method} is not supported by this server yet: ${PENDING_FEATURES[feature]}`, { method, feature });
}
